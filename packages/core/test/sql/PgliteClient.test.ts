import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { clientOf, layer, open } from "../../src/sql/PgliteClient.js"

describe("the PGlite client's one connection", () => {
  it.layer(layer(undefined), { timeout: 60_000 })((it) => {
    it.effect("a transaction owns it: another fiber's statement waits for the commit rather than running inside it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE owned (n int)`
        const inside = yield* Deferred.make<void>()
        const proceed = yield* Deferred.make<void>()
        const transaction = yield* Effect.fork(
          Effect.gen(function*() {
            yield* sql`INSERT INTO owned VALUES (1)`
            yield* Deferred.succeed(inside, undefined)
            yield* Deferred.await(proceed)
            yield* sql`INSERT INTO owned VALUES (2)`
          }).pipe(sql.withTransaction)
        )
        yield* Deferred.await(inside)
        const reading = yield* Effect.fork(sql<{ n: number }>`SELECT count(*)::int AS n FROM owned`)
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
        yield* Deferred.succeed(proceed, undefined)
        yield* Fiber.join(transaction)
        expect((yield* Fiber.join(reading))[0]!.n).toBe(2)
      }).pipe(Effect.orDie))

    it.effect("a statement interrupted while it waits for it, or one that fails, does not keep it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release)).pipe(sql.withTransaction)
        )
        yield* Deferred.await(held)
        const waiting = yield* Effect.fork(sql`SELECT 1`)
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        yield* Fiber.interrupt(waiting)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        expect((yield* Effect.either(sql`SELECT * FROM missing_table`))._tag).toBe("Left")
        const [one] = yield* sql<{ one: number }>`SELECT 1 AS one`
        expect(one!.one).toBe(1)
      }).pipe(Effect.orDie))
  })
})

/** A client over an in-memory PGlite, and that PGlite itself, to compare with its own `query`. */
const client = Effect.gen(function*() {
  const db = yield* open(undefined)
  return { db, sql: yield* clientOf(db) }
}).pipe(Effect.provide(Reactivity.layer))

describe("statements with parameters on PGlite", () => {
  it.scoped("a statement with parameters is prepared once, answers as PGlite's own query does, and again after its table changed", () =>
    Effect.gen(function*() {
      const { db, sql } = yield* client
      yield* sql`CREATE TABLE kept (id int PRIMARY KEY, doc jsonb, at timestamptz, flag boolean, big bigint, note text)`
      const row = {
        doc: { a: [1, "two"], b: null },
        at: new Date("2026-01-02T03:04:05.678Z"),
        flag: true,
        big: 9007199254740993n
      }
      for (let id = 1; id <= 3; id++) {
        yield* sql`INSERT INTO kept VALUES (${id}, ${row.doc}, ${row.at}, ${row.flag}, ${row.big}, ${
          id === 2 ? null : "x"
        })`
      }
      const read = (id: number) => sql`SELECT * FROM kept WHERE id = ${id}`
      // The same answers, values and types, as PGlite's own query gives.
      for (let id = 1; id <= 3; id++) {
        expect(yield* read(id)).toEqual(
          (yield* Effect.promise(() => db.query("SELECT * FROM kept WHERE id = $1", [id]))).rows
        )
      }
      const preparedAs = (text: string) =>
        Effect.promise(() =>
          db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1", [text])
        ).pipe(Effect.map((r) => r.rows[0]!.n))
      expect(yield* preparedAs("SELECT * FROM kept WHERE id = $1")).toBe(1)
      // A column added changes what `*` answers, which a prepared statement's plan may not: prepared again.
      yield* sql`ALTER TABLE kept ADD COLUMN later int DEFAULT 7`
      expect((yield* read(1))[0]).toMatchObject({ id: 1, later: 7 })
      // A failing statement (a broken rule) fails as before, and the connection serves the next.
      const duplicate = yield* Effect.flip(sql`INSERT INTO kept (id) VALUES (${1})`)
      expect((duplicate.cause as { code?: string }).code).toBe("23505")
      expect((yield* read(2))[0]).toMatchObject({ id: 2, note: null })
    }).pipe(Effect.orDie))

  it.scoped("no more statements than the limit stay prepared", () =>
    Effect.gen(function*() {
      const { db, sql } = yield* client
      for (let k = 0; k < 300; k++) {
        expect((yield* sql`SELECT ${k}::int + ${sql.literal(String(k))} AS n`)[0]).toEqual({ n: 2 * k })
      }
      const { rows } = yield* Effect.promise(() =>
        db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements")
      )
      expect(rows[0]!.n).toBeLessThanOrEqual(256)
    }).pipe(Effect.orDie))
})
