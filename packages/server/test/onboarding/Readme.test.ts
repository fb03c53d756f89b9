import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { baseUrl, TestServer } from "../support/TestServer.js"

const readme = readFileSync(fileURLToPath(new URL("../../../../README.md", import.meta.url)), "utf8")

describe("the README", () => {
  layer(TestServer(), { timeout: "120 seconds" })((it) => {
    it.effect("'Try it' runs as pasted: register, log in into $TOKEN, and read the user with it", () =>
      Effect.gen(function*() {
        const block = /Try it[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1]
        expect(block).toBeDefined()
        // The snippet talks to localhost:3000; here it talks to the test server, with a fresh user.
        const suffix = Date.now().toString(36)
        const script = block!
          .replaceAll("localhost:3000", (yield* baseUrl).replace("http://", ""))
          .replaceAll("ada@example.com", `ada_${suffix}@example.com`)
          .replaceAll("\"username\":\"ada\"", `"username":"ada_${suffix}"`)
        const { stdout } = yield* Effect.promise(() => promisify(execFile)("bash", ["-euo", "pipefail", "-c", script]))
        // curl prints each body without a newline: the last object is the user as /users/me answers it.
        expect(JSON.parse(stdout.slice(stdout.lastIndexOf("{\"id\"")))).toMatchObject({
          email: `ada_${suffix}@example.com`,
          username: `ada_${suffix}`
        })
      }))

    it("links the quick start", () => {
      expect(readme).toContain("(docs/quick-start.md)")
    })
  })
})
