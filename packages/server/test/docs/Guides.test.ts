import { describe, expect, it } from "@effect/vitest"
import { defaultRateLimitPolicy } from "@trading-platform/core"
import { openApiDocument } from "@trading-platform/server"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { typeErrors } from "../../../../test/support/TypeCheck.js"
import { settings } from "../../src/ServerConfig.js"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const guides = ["docs/client.md", "docs/embedding.md", "docs/signals.md"]

/** The ```ts blocks of a guide, each a module of its own. */
const codeBlocks = (guide: string) =>
  [...readFileSync(root + guide, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)

describe("the guides", () => {
  it("type-check every TypeScript block against the packages (names, options, methods)", async () => {
    // Under the repository, so the blocks resolve the workspace packages as a reader's project would.
    const dir = `${root}node_modules/.cache/guides-check/`
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    const files = guides.flatMap((guide) =>
      codeBlocks(guide).map((code, i) => {
        const file = `${dir}${guide.replace(/\W/g, "_")}_${i + 1}.ts`
        writeFileSync(file, `${code}\nexport {}\n`)
        return file
      })
    )
    expect(files.length).toBeGreaterThanOrEqual(8)

    // Blocks may declare things only to show them.
    const problems = await typeErrors(files, { noUnusedLocals: false })
    expect(problems).toEqual([])
    rmSync(dir, { recursive: true })
  }, 120_000)

  it("name only routes the API has (quick start, users and sessions)", () => {
    const paths = Object.keys(openApiDocument().paths).map((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`))
    for (const guide of ["docs/quick-start.md", "docs/users-and-sessions.md"]) {
      const text = readFileSync(root + guide, "utf8")
      const named = [...text.matchAll(/(?:localhost:3000|`(?:GET|POST|PUT|DELETE) )(\/[\w/{}-]+)/g)]
        .map((m) => (m[1]!.startsWith("/api") ? m[1]! : `/api${m[1]!}`))
        .filter((p) => p !== "/api/docs" && p !== "/api/openapi.json")
      expect(named.length, guide).toBeGreaterThanOrEqual(8)
      for (const path of named) expect(paths.some((p) => p.test(path)), `${guide}: ${path}`).toBe(true)
    }
  })

  it("configuration lists every setting the server reads", () => {
    const text = readFileSync(root + "docs/configuration.md", "utf8")
    for (const [name] of settings) expect(text, name).toContain(`\`${name}\``)
  })

  it("limits state the default quotas of the rate-limit policy", () => {
    const text = readFileSync(root + "docs/limits.md", "utf8")
    for (const quota of [defaultRateLimitPolicy.auth, defaultRateLimitPolicy.read, defaultRateLimitPolicy.write]) {
      expect(quota.window_ms).toBe(60_000)
      expect(text).toContain(`| ${quota.limit} / minute |`)
    }
  })
})
