import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as MigratedTemplate from "../../src/sql/MigratedTemplate.js"
import { migrationTexts } from "../../src/sql/Migrations.js"
import * as PgliteClient from "../../src/sql/PgliteClient.js"

const tables = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`,
    (rows) => rows.map((r) => r.name)
  )
const applied = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM trading_platform_migrations`, ([row]) => row!.n)

describe("the migrated template of in-memory databases", () => {
  it("is keyed by every migration's name and statements, and by none when a migration is not a script", () => {
    const key = MigratedTemplate.templateKey()
    expect(Option.isSome(key)).toBe(true)
    expect(MigratedTemplate.templateKey(migrationTexts)).toEqual(key)
    const added = [...migrationTexts, ["0999_added", "CREATE TABLE added (id int);"] as const]
    expect(MigratedTemplate.templateKey(added)).not.toEqual(key)
    const edited = migrationTexts.map(([name, text], i) => [name, i === 0 ? `${text} ` : text] as const)
    expect(MigratedTemplate.templateKey(edited)).not.toEqual(key)
    expect(MigratedTemplate.templateKey([...migrationTexts, ["0999_code", undefined]])).toEqual(Option.none())
  })

  it.scoped(
    "replaces a template that does not load, then starts every in-memory database from it",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "tp-template-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const file = join(dir, `pglite-template-${Option.getOrThrow(MigratedTemplate.templateKey())}.tar`)
        writeFileSync(file, "not a tarball")
        // Other releases' templates: the two newest are kept when a template is written.
        for (const [i, name] of ["old", "newer", "newest"].entries()) {
          const other = join(dir, `pglite-template-${name}.tar`)
          writeFileSync(other, name)
          utimesSync(other, 1_000_000 + i, 1_000_000 + i)
        }

        // The corrupt template: the database is created and migrated, and the template written anew.
        const created = yield* MigratedTemplate.makeMemory(dir)
        expect(yield* applied(created)).toBe(migrationTexts.length)
        expect(statSync(file).size).toBeGreaterThan(1_000_000)
        expect(readdirSync(dir).sort()).toEqual(
          [
            `pglite-template-${Option.getOrThrow(MigratedTemplate.templateKey())}.tar`,
            "pglite-template-newer.tar",
            "pglite-template-newest.tar"
          ].sort()
        )

        // A template with a table of its own shows that the next database is loaded from it.
        const marked = yield* PgliteClient.open(undefined, new Blob([readFileSync(file)]))
        yield* Effect.promise(() => marked.exec("CREATE TABLE template_marker (id int)"))
        const dump = yield* Effect.promise(() => marked.dumpDataDir("none"))
        writeFileSync(file, new Uint8Array(yield* Effect.promise(() => dump.arrayBuffer())))
        const loaded = yield* MigratedTemplate.makeMemory(dir)
        expect(yield* tables(loaded)).toContain("template_marker")
        expect(yield* applied(loaded)).toBe(migrationTexts.length)
        // Each database is its own copy.
        yield* loaded`CREATE TABLE only_here (id int)`
        expect(yield* tables(yield* MigratedTemplate.makeMemory(dir))).not.toContain("only_here")
        expect(existsSync(file)).toBe(true)
        // Nothing of the loads is left pending: a file read left open keeps the process alive once all else has closed.
        expect(process.getActiveResourcesInfo()).not.toContain("FileHandleReadWrap")
      }).pipe(Effect.provide(Reactivity.layer)),
    { timeout: 120_000 }
  )
})
