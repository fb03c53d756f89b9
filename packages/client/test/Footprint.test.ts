import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The URL of every module a fresh Node process resolves while running `code` (an ES module). */
const modulesLoadedBy = (code: string): Array<string> => {
  const log = join(mkdtempSync(join(tmpdir(), "footprint-")), "modules.log")
  const hook = new URL("./support/ModuleLog.mjs", import.meta.url).href
  execFileSync(process.execPath, [
    "--conditions=@trading-platform/source",
    "--import",
    "tsx",
    "--import",
    `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hook)})`,
    "--input-type=module",
    "--eval",
    code
  ], { cwd: fileURLToPath(new URL("..", import.meta.url)), env: { ...process.env, MODULE_LOG: log }, stdio: "pipe" })
  return readFileSync(log, "utf8").trim().split("\n")
}

// The @effect/platform barrel loads every module of it, HttpApiScalar's 3.4 MB page included.
const heavy =
  /@electric-sql\/pglite|quickjs|@effect\/sql|@effect\/platform-node|ioredis|\/packages\/core\/src\/index\.ts|@effect\/platform\/dist\/\w+\/index\.js|HttpApiScalar/

describe("the client's footprint", () => {
  it("reaches core through @trading-platform/core/contract and loads no storage, sandbox or server", () => {
    const loaded = modulesLoadedBy(`
      import { createClient, makeClient } from "@trading-platform/client"
      createClient({ baseUrl: "http://127.0.0.1:9" })
      if (typeof makeClient !== "function") process.exit(1)
    `)
    expect(loaded).toContainEqual(expect.stringMatching(/\/packages\/core\/src\/contract\.ts$/))
    expect(loaded).toContainEqual(expect.stringMatching(/\/packages\/client\/src\/index\.ts$/))
    expect(loaded.filter((url) => heavy.test(url))).toEqual([])
  }, 60_000)

  it("the same probe does see PGlite when core's main entry is imported", () => {
    const loaded = modulesLoadedBy(`import "@trading-platform/core"`)
    expect(loaded.filter((url) => heavy.test(url)).length).toBeGreaterThan(0)
  }, 60_000)
})
