import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { parse, PGlite, protocol, type Results } from "@electric-sql/pglite"
import { absurd, Context, Effect, Layer, Scope, Stream } from "effect"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { requirePath } from "../jobs/WorkerThread.js"
import { Notifications } from "./Notifications.js"

// PostgreSQL's default 128 MB of shared buffers is resident memory in the server's own process;
// the embedded database is small and its files are in the OS page cache anyway.
export const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"]

/**
 * V8's WebAssembly tiering budget: its default (in V8 11 and 12), and the one for PGlite's start.
 * Opening a database, and more so creating one, runs once through much of PostgreSQL; at the
 * default budget V8 sends a hundred or more of its functions, up to 100 KB each, to the optimising
 * compiler, over a second of compiling on background threads that compete with the start on a
 * small machine. A budget a hundred times larger leaves what runs once to the baseline compiler
 * (`docs/performance.md`). The cluster's creation (below) runs with it, and the reference server's
 * process until it listens.
 */
export const wasmTieringBudget = { default: 1_800_000, start: 180_000_000 } as const

/**
 * PostgreSQL's dialect as `@effect/sql-pg` compiles it (no custom fragments are used), without
 * loading that package: it loads node-postgres, whose load probes for a fetch implementation, and
 * those two cost a PGlite server's start about 30 ms for a network client it never opens.
 */
const compiler = Statement.makeCompiler<never>({
  dialect: "pg",
  placeholder: (index) => `$${index}`,
  onIdentifier: Statement.defaultEscape("\""),
  onRecordUpdate: (placeholders, alias, columns, values, returning) => [
    `(values ${placeholders}) AS ${alias}${columns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
    returning ? values.flat().concat(returning[1]) : values.flat()
  ],
  onCustom: absurd
})

/**
 * Creates the database cluster in a new data directory (PostgreSQL's initdb) in a process of its
 * own, then PGlite opens it as on any restart: initdb grows PGlite's memory to about 600 MiB
 * resident, which neither WebAssembly nor a worker thread's exit gives back; a process's exit does.
 */
const initialise = (dataDir: string) =>
  Effect.async<void, SqlError>((resume) => {
    const child = execFile(
      process.execPath,
      [
        "-e",
        // A flag V8 does not know is ignored here, where on the command line it would stop the process.
        `require("node:v8").setFlagsFromString("--wasm-tiering-budget=${wasmTieringBudget.start}")
        const { PGlite } = require(process.argv[1])
        PGlite.create(process.argv[2], { startParams: JSON.parse(process.argv[3]) }).then((db) => db.close(), (e) => {
          // PGlite's file errors are Emscripten's, with a name and an errno but no message.
          process.stderr.write(e?.message ?? (e?.errno === undefined ? String(e) : e.name + " (errno " + e.errno + ")"))
          process.exitCode = 1
        })`,
        requirePath("@electric-sql/pglite"),
        dataDir,
        JSON.stringify(startParams)
      ],
      (error, _stdout, stderr) =>
        resume(
          error === null ? Effect.void : Effect.fail(
            new SqlError({
              cause: stderr.trim() || error,
              message: `PGlite failed to create a database in ${dataDir}`
            })
          )
        )
    )
    return Effect.sync(() => child.kill())
  })

/**
 * Opens PGlite on `dataDir` (a folder, created first if new; `undefined` keeps everything in
 * memory), or in memory from a data directory dumped earlier (`loadDataDir`, see
 * `MigratedTemplate.ts`); closed with the scope.
 */
export const open = (dataDir: string | undefined, loadDataDir?: Blob) =>
  Effect.gen(function*() {
    if (dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"))) yield* initialise(dataDir)
    return yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          loadDataDir === undefined
            ? PGlite.create(dataDir, { startParams })
            : PGlite.create({ startParams, loadDataDir }),
        catch: (cause) => new SqlError({ cause, message: `PGlite failed to start${dataDir ? ` in ${dataDir}` : ""}` })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.zipRight(Effect.logDebug("Embedded database closed")))
    )
  })

/**
 * An `@effect/sql` client over PGlite (PostgreSQL compiled to WASM, in process).
 * `dataDir` persists to a folder; `undefined` keeps everything in memory.
 */
export const make = (dataDir: string | undefined) => Effect.flatMap(open(dataDir), clientOf)

/** The `@effect/sql` client over an open PGlite. */
export const clientOf = (db: PGlite) =>
  Effect.gen(function*() {
    const fail = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })
    const prepared = preparedStatements(db)
    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array" = "object") =>
      Effect.tryPromise({ try: () => prepared.run(sql, params, rowMode), catch: fail })
    // Like node-postgres: without parameters use the simple protocol, which allows multi-statement scripts.
    const execute: Connection["execute"] = (sql, params, transform) =>
      Effect.map(
        params.length === 0
          ? Effect.tryPromise({ try: () => db.exec(sql), catch: fail }).pipe(Effect.map((rs) => rs.at(-1)?.rows ?? []))
          : Effect.map(query(sql, params), (r) => r.rows),
        (rows) => (transform ? transform(rows) : rows)
      )
    const connection: Connection = {
      execute,
      executeUnprepared: execute,
      executeRaw: (sql, params) => query(sql, params),
      executeValues: (sql, params) => Effect.map(query(sql, params, "array"), (r) => r.rows),
      executeStream: (sql, params, transform) => Stream.fromIterableEffect(execute(sql, params, transform))
    }
    // PGlite is one connection: a transaction must own it, or other fibers' statements would land
    // inside its BEGIN..COMMIT. Statements inside withTransaction reuse the held connection.
    const lock = yield* Effect.makeSemaphore(1)
    // `acquireRelease` without its finaliser's fiber-ref diff: that diff compared the statement
    // fiber's whole context (a request's 85 services) on every statement, 1.4-2.5% of a read's CPU.
    const acquirer = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        Effect.scope,
        (scope) =>
          Effect.zipRight(restore(lock.take(1)), Effect.as(Scope.addFinalizer(scope, lock.release(1)), connection))
      )
    )
    const sql = yield* SqlClient.make({
      acquirer,
      transactionAcquirer: acquirer,
      compiler,
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", "pglite"]]
    })
    // LISTEN and UNLISTEN take the connection too: inside another fiber's transaction they would
    // only hold from its commit, and not at all after a rollback.
    const listen = (channel: string) =>
      Stream.asyncScoped<string, SqlError>((emit) =>
        Effect.acquireRelease(
          lock.withPermits(1)(
            Effect.tryPromise({ try: () => db.listen(channel, (payload) => emit.single(payload)), catch: fail })
          ),
          (unlisten) => Effect.ignore(lock.withPermits(1)(Effect.tryPromise(() => unlisten())))
        )
      )
    return Object.assign(sql, { listen })
  })

/** The most statements kept prepared; the least recently used is closed past it. */
const preparedLimit = 256

/**
 * Runs statements with parameters as named prepared statements, each prepared once. PGlite's own
 * `query` parses and describes the statement on every call, in six calls into PostgreSQL; a
 * prepared one binds, describes its result and executes in one, about a third of the time for
 * a statement that reads one row (`docs/performance.md`). Values are serialised by the types the
 * statement's description gave, as `query` does. Callers take turns (the client's lock).
 */
const preparedStatements = (db: PGlite) => {
  const { serialize } = protocol
  const statements = new Map<string, { readonly name: string; readonly types: ReadonlyArray<number> }>()
  let named = 0
  const joined = (parts: ReadonlyArray<Uint8Array>) => {
    const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
    let at = 0
    for (const part of parts) {
      out.set(part, at)
      at += part.length
    }
    return out
  }
  const close = (name: string) => db.execProtocol(joined([serialize.close({ type: "S", name }), serialize.sync()]))
  const prepare = async (sql: string) => {
    const name = `s${++named}`
    const { messages } = await db.execProtocol(
      joined([serialize.parse({ name, text: sql }), serialize.describe({ type: "S", name }), serialize.sync()])
    )
    const statement = { name, types: parse.parseDescribeStatementResults(messages) }
    if (statements.size >= preparedLimit) {
      const [oldest, { name: closed }] = statements.entries().next().value!
      statements.delete(oldest)
      await close(closed)
    }
    statements.set(sql, statement)
    return statement
  }
  const execute = async (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") => {
    let statement = statements.get(sql)
    if (statement === undefined) statement = await prepare(sql)
    else {
      // Most recently used last, for the eviction above.
      statements.delete(sql)
      statements.set(sql, statement)
    }
    const values = params.map((param, i) =>
      param === null || param === undefined
        ? null
        : (db.serializers[statement.types[i]!] ?? ((value: unknown) => String(value)))(param)
    )
    const { messages } = await db.execProtocol(joined([
      serialize.bind({ statement: statement.name, values }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync()
    ]))
    return parse.parseResults(messages, db.parsers, { rowMode })[0] as Results<any>
  }
  return {
    run: async (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") => {
      try {
        return await execute(sql, params, rowMode)
      } catch (e) {
        // A change of a table (a migration) can change the columns a prepared statement answers,
        // which PostgreSQL refuses ("cached plan must not change result type"): prepared again.
        if ((e as { code?: string }).code !== "0A000" || !statements.has(sql)) throw e
        const { name } = statements.get(sql)!
        statements.delete(sql)
        await close(name)
        return await execute(sql, params, rowMode)
      }
    }
  }
}

/** `SqlClient` and its `Notifications` over one PGlite client. */
export const context = (client: SqlClient.SqlClient & Notifications["Type"]) =>
  Context.make(SqlClient.SqlClient, client).pipe(Context.add(Notifications, client))

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient | Notifications, SqlError> =>
  Layer.scopedContext(Effect.map(make(dataDir), context)).pipe(Layer.provide(Reactivity.layer))
