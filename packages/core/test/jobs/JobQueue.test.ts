import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { DatabaseLive, RateLimited } from "@trading-platform/core"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { makeJobQueue } from "../../src/jobs/JobQueue.js"
import { candleSyncJobs } from "../../src/market/CandleSyncsRepo.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute))

/** A user of their own and a job queue of candle syncs (any kind of job would do). */
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const queue = yield* makeJobQueue(candleSyncJobs)
  const user = (name: string) =>
    Effect.map(
      sql<{ id: number }>`
        INSERT INTO users (email, username, password_hash, created_at, updated_at)
        VALUES (${`${name}@example.com`}, ${name}, 'x', ${at(0)}, ${at(0)}) RETURNING id`,
      ([row]) => row!.id
    )
  const insert = (userId: number) =>
    sql`
      INSERT INTO candle_syncs (user_id, exchange, symbol, timeframe, from_time, to_time, status, created_at)
      VALUES (${userId}, 'venue1', 'BTC', '1h', 0, 1, 'queued', ${at(0)})`
  const claim = (minute: number) =>
    Effect.map(
      queue.claim({ now: at(minute), leaseUntil: at(minute + 30), worker: "w" }),
      Option.map((row) => row.user_id)
    )
  return { sql, queue, user, insert, claim }
})

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`job queue over ${storage.name}`, () => {
    layer(DatabaseLive.pipe(Layer.provide(TestConfig(storage))), { timeout: "120 seconds" })((it) => {
      it.effect("owners take turns: a user who queued later is not served after all of another's earlier jobs", () =>
        Effect.gen(function*() {
          const { claim, insert, sql, user } = yield* setup
          const [a, b, c] = [yield* user("turns_a"), yield* user("turns_b"), yield* user("turns_c")]
          for (const owner of [a, a, a, b, b, c]) yield* insert(owner)
          // One worker, each job finished before the next claim: round-robin, not first come first served.
          const order: Array<number> = []
          for (let minute = 1; minute <= 6; minute++) {
            const owner = Option.getOrThrow(yield* claim(minute))
            order.push(owner)
            yield* sql`UPDATE candle_syncs SET status = 'completed' WHERE status = 'running'`
          }
          expect(order).toEqual([a, b, c, a, b, a])
          expect(Option.isNone(yield* claim(7))).toBe(true)
        }))

      it.effect("with jobs running, the next claim goes to the owner with the fewest running", () =>
        Effect.gen(function*() {
          const { claim, insert, user } = yield* setup
          const [a, b] = [yield* user("running_a"), yield* user("running_b")]
          for (const owner of [a, a, a, b]) yield* insert(owner)
          expect(yield* claim(1)).toEqual(Option.some(a))
          expect(yield* claim(2)).toEqual(Option.some(b))
          expect(yield* claim(3)).toEqual(Option.some(a))
        }))

      it.effect("a claim ranks each owner with jobs waiting once, not once per waiting job", () =>
        Effect.gen(function*() {
          const { claim, insert, sql, user } = yield* setup
          const [a, b] = [yield* user("ranked_a"), yield* user("ranked_b")]
          // The index scans of one claim, as PostgreSQL counts them for its transaction, which is rolled back.
          const scans = Effect.map(
            sql<{ scans: number }>`
              SELECT coalesce(sum(pg_stat_get_xact_numscans(indexrelid)), 0)::int AS scans
              FROM pg_index WHERE indrelid = 'candle_syncs'::regclass`,
            ([row]) => row!.scans
          )
          const scansOfClaim = Effect.flip(sql.withTransaction(Effect.gen(function*() {
            const before = yield* scans
            expect(Option.isSome(yield* claim(1))).toBe(true)
            return yield* Effect.fail((yield* scans) - before)
          })))
          yield* Effect.gen(function*() {
            for (const owner of [a, b]) yield* insert(owner)
            const few = yield* scansOfClaim
            for (let i = 0; i < 30; i++) for (const owner of [a, b]) yield* insert(owner)
            // Ranking per waiting job made two lookups for each of the 60 more.
            expect(yield* scansOfClaim).toBe(few)
          }).pipe(Effect.ensuring(Effect.orDie(sql`DELETE FROM candle_syncs WHERE user_id IN (${a}, ${b})`)))
        }))

      it.effect("a job handed back reads as queued at no progress until claimed again; completing it clears the earlier attempt's error", () =>
        Effect.gen(function*() {
          const { insert, queue, sql, user } = yield* setup
          const owner = yield* user("handed_back")
          yield* insert(owner)
          const [inserted] = yield* sql<{ id: number }>`SELECT id FROM candle_syncs WHERE user_id = ${owner}`
          const id = inserted!.id
          const row = Effect.map(
            sql<
              {
                status: string
                progress: number
                attempts: number
                lease_until: Date | null
                claimed_by: string | null
                error: string | null
              }
            >`
              SELECT status, progress, attempts, lease_until, claimed_by, error FROM candle_syncs WHERE id = ${id}`,
            ([r]) => r!
          )
          const claimOwn = (minute: number) =>
            Effect.map(
              queue.claim({ now: at(minute), leaseUntil: at(minute + 30), worker: `w${minute}` }),
              Option.getOrThrow
            )
          const waiting = { status: "queued", progress: 0, lease_until: null, claimed_by: null }

          // Stopped (a shutdown): the attempt does not count.
          const first = yield* claimOwn(1)
          expect(yield* queue.renew(first, 0.6, at(40))).toBe(true)
          yield* queue.handBack(first, "The worker stopped", at(2))
          expect(yield* row).toEqual({ ...waiting, attempts: 0, error: "The worker stopped" })

          // Failed in a way another attempt may not repeat: it counts, and says why.
          const second = yield* claimOwn(3)
          expect(yield* row).toMatchObject({ status: "running", attempts: 1, claimed_by: "w3" })
          yield* queue.renew(second, 0.3, at(40))
          yield* queue.release(second, "The venue did not answer", at(4))
          expect(yield* row).toEqual({ ...waiting, attempts: 1, error: "The venue did not answer" })

          const third = yield* claimOwn(5)
          expect(third.error).toBe("The venue did not answer")
          yield* queue.complete(third, { bars: 1, waits: 0 }, at(6))
          expect(yield* row).toMatchObject({ status: "completed", progress: 1, attempts: 2, error: null })
        }))

      it.effect("a job cancelled while it waits after a hand-back keeps no error", () =>
        Effect.gen(function*() {
          const { insert, queue, sql, user } = yield* setup
          const owner = yield* user("cancelled_after_hand_back")
          yield* insert(owner)
          const run = Option.getOrThrow(yield* queue.claim({ now: at(1), leaseUntil: at(31), worker: "w" }))
          yield* queue.handBack(run, "The worker stopped", at(2))
          // It answers the columns asked for, and no others.
          const answer = Schema.Struct({ status: Schema.String, error: Schema.NullOr(Schema.String) })
          expect(Option.getOrThrow(yield* queue.cancel(run.id, at(3), answer))).toEqual({
            status: "cancelled",
            error: null
          })
          const [r] = yield* sql<{ error: string | null }>`SELECT error FROM candle_syncs WHERE id = ${run.id}`
          expect(r!.error).toBeNull()
        }))

      it.effect("admission: past the cap of queued and running jobs, 429 with Retry-After; parallel submissions cannot pass it together", () =>
        Effect.gen(function*() {
          const { insert, queue, sql, user } = yield* setup
          const owner = yield* user("capped")
          const other = yield* user("uncapped")
          const submit = (id: number) => queue.admit(id, 3, insert(id))
          const results = yield* Effect.all(Array.from({ length: 8 }, () => Effect.either(submit(owner))), {
            concurrency: "unbounded"
          })
          expect(results.filter(Either.isRight)).toHaveLength(3)
          for (const result of results.filter(Either.isLeft)) expect(result.left).toBeInstanceOf(RateLimited)
          const refused = yield* Effect.flip(submit(owner))
          expect(refused).toBeInstanceOf(RateLimited)
          expect(refused).toMatchObject({ retry_after: 10 })
          // Another user is not held by it; a finished job frees a place.
          yield* submit(other)
          yield* sql`UPDATE candle_syncs SET status = 'completed' WHERE id = (SELECT min(id) FROM candle_syncs WHERE user_id = ${owner})`
          yield* submit(owner)
          const [count] = yield* sql<
            { n: number }
          >`SELECT count(*)::int AS n FROM candle_syncs WHERE user_id = ${owner}`
          expect(count!.n).toBe(4)
        }))
    })
  })
}
