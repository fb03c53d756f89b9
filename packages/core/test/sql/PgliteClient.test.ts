import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { layer } from "../../src/sql/PgliteClient.js"

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
