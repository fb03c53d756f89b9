import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { requirePath } from "../jobs/WorkerThread.js"
import { migrate, migrationTexts } from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"

/**
 * An in-memory database starts from a migrated template: the data directory of a new database
 * with every migration applied, dumped once (`dumpDataDir`) into a cache and loaded by every later
 * in-memory database (`loadDataDir`). Creating a database runs PostgreSQL's initdb in WebAssembly
 * and then 24 migrations, about 10 s on a small machine; loading the template takes under one.
 * The template is keyed by what makes it: the PGlite release, its start parameters and every
 * migration's name and statements, so adding or changing a migration (or upgrading PGlite) builds
 * a new one on first use. Anything wrong with the cache (absent, unwritable, a corrupt file) only
 * costs the slow path.
 */

/** The PGlite release installed: its package.json, found above its entry module. */
const pgliteVersion = () => {
  let dir = dirname(requirePath("@electric-sql/pglite"))
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const file = join(dir, "package.json")
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string }
      if (pkg.name === "@electric-sql/pglite") return pkg.version ?? "unknown"
    }
  }
  return "unknown"
}

/**
 * The template's key, or none when some migration is not a plain script (its statements cannot be
 * named, so no template could be known to match it).
 */
export const templateKey = (
  texts: ReadonlyArray<readonly [string, string | undefined]> = migrationTexts
): Option.Option<string> => {
  if (texts.some(([, text]) => text === undefined)) return Option.none()
  const hash = createHash("sha256")
  hash.update(`pglite ${pgliteVersion()}\n${JSON.stringify(PgliteClient.startParams)}\n`)
  for (const [name, text] of texts) hash.update(`${name}\n${text!.length}\n${text}\n`)
  return Option.some(hash.digest("hex").slice(0, 24))
}

/** Where templates are kept: `$XDG_CACHE_HOME/trading-platform`, else `~/.cache/trading-platform`. */
export const templateDirectory = () =>
  join(process.env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "trading-platform")

const prefix = "pglite-template-"
const fileOf = (dir: string, key: string) => join(dir, `${prefix}${key}.tar`)

// Kept besides the one written: other checkouts or releases on this machine may use theirs.
const keptOthers = 2

/** Writes the template atomically (another process may write the same), and drops all but the newest few others. */
const save = (dir: string, key: string, db: PGlite) =>
  Effect.tryPromise(() => db.dumpDataDir("none")).pipe(
    Effect.flatMap((dump) => Effect.promise(() => dump.arrayBuffer())),
    Effect.flatMap((bytes) =>
      Effect.try(() => {
        mkdirSync(dir, { recursive: true, mode: 0o700 })
        const target = fileOf(dir, key)
        const scratch = `${target}.${process.pid}.tmp`
        writeFileSync(scratch, new Uint8Array(bytes), { mode: 0o600 })
        renameSync(scratch, target)
        const others = readdirSync(dir, { withFileTypes: true })
          .filter((e) =>
            e.isFile() && e.name.startsWith(prefix) && e.name.endsWith(".tar") && e.name !== `${prefix}${key}.tar`
          )
          .map((e) => join(dir, e.name))
          .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
        for (const old of others.slice(keptOthers)) rmSync(old, { force: true })
      })
    ),
    Effect.tapError((cause) => Effect.logDebug("The migrated template could not be saved", cause)),
    Effect.ignore
  )

/**
 * An in-memory PGlite, migrated: loaded from the template in `dir` when there is one for the
 * current migrations, else created and migrated, then dumped there for the next.
 */
export const makeMemory = (dir: string = templateDirectory()) =>
  Effect.gen(function*() {
    const key = templateKey()
    if (Option.isSome(key)) {
      const file = fileOf(dir, key.value)
      if (existsSync(file)) {
        // Read whole into memory, not as `openAsBlob`'s file-backed Blob: on Node 20 reading that one
        // leaves a file read pending, which keeps the process alive after everything else has closed.
        const loaded = yield* Effect.tryPromise(() => readFile(file)).pipe(
          Effect.flatMap((bytes) => PgliteClient.open(undefined, new Blob([bytes]))),
          Effect.flatMap(PgliteClient.clientOf),
          // A template that does not load (cut short, from another build) is made again.
          Effect.tapError((cause) =>
            Effect.zipRight(
              Effect.logDebug("The migrated template did not load; creating the database", cause),
              Effect.sync(() => rmSync(file, { force: true }))
            )
          ),
          Effect.option
        )
        if (Option.isSome(loaded)) return loaded.value
      }
    }
    const db = yield* PgliteClient.open(undefined)
    const sql = yield* PgliteClient.clientOf(db)
    if (Option.isSome(key)) {
      yield* Effect.provideService(migrate, SqlClient.SqlClient, sql)
      yield* save(dir, key.value, db)
    }
    return sql
  })

/** `SqlClient` (and its `Notifications`) over an in-memory PGlite that starts migrated (see above). */
export const layerMemory = (dir?: string) =>
  Layer.scopedContext(Effect.map(makeMemory(dir), PgliteClient.context)).pipe(Layer.provide(Reactivity.layer))
