import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const cache = join(root, "node_modules/.cache/trading-platform/start")
const launch = (args: Array<string>) =>
  promisify(execFile)(process.execPath, [join(root, "scripts/start.mjs"), ...args], { cwd: root, timeout: 240_000 })
const builds = () => (existsSync(cache) ? readdirSync(cache).filter((name) => !name.endsWith(".tmp")) : [])

describe("npm start (scripts/start.mjs)", () => {
  it("runs the server's bundle with the flags given, and bundles again after a source file changed", {
    timeout: 600_000
  }, async () => {
    const help = await launch(["--help"])
    expect(help.stdout).toMatch(/^Usage: /)
    expect(help.stdout).toContain("DATA_DIR")
    const before = builds()
    expect(before.length).toBeGreaterThan(0)

    // A changed modification time is a change: the next start builds a bundle of its own.
    const source = join(root, "packages/server/src/Version.ts")
    const { atime, mtime } = statSync(source)
    utimesSync(source, atime, new Date(mtime.getTime() + 1000))
    try {
      expect((await launch(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
      expect(builds().filter((name) => !before.includes(name))).toHaveLength(1)
    } finally {
      utimesSync(source, atime, mtime)
    }
  })
})
