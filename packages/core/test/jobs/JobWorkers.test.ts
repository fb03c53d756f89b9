import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { DatabaseLive, JobWakeup } from "@trading-platform/core"
import { Context, Deferred, Duration, Effect, Layer, Option, Queue, TestClock, TestServices } from "effect"
import { makeJobQueue } from "../../src/jobs/JobQueue.js"
import { runJobWorkers } from "../../src/jobs/JobWorkers.js"
import { candleSyncJobs } from "../../src/market/CandleSyncsRepo.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const kind = candleSyncJobs.table
// So long that within a test only a wake-up can start a job.
const never = Duration.hours(1)
// The real clock: the workers' polls and leases, and the bound below, which only a missed wake-up reaches.
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: "60 seconds", onTimeout: () => "never happened" })

/**
 * Candle syncs as the kind of job (any would do), none left from another test: `insert` queues one
 * for a new user; `concurrency` workers polling every `poll` offer each job's id to `started` and
 * hold it until `finish` opens. Answers once a claim has found nothing.
 */
const setup = (
  name: string,
  concurrency: number,
  poll: Duration.Duration,
  elsewhere?: JobWakeup,
  drained?: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const wakeup = elsewhere ?? (yield* JobWakeup)
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM candle_syncs`
    const queue = yield* makeJobQueue(candleSyncJobs)
    const [user] = yield* sql<{ id: number }>`
      INSERT INTO users (email, username, password_hash, created_at, updated_at)
      VALUES (${`${name}@example.com`}, ${name}, 'x', now(), now()) RETURNING id`
    const insert = sql`
      INSERT INTO candle_syncs (user_id, exchange, symbol, timeframe, from_time, to_time, status, created_at)
      VALUES (${user!.id}, 'venue1', 'BTC', '1h', 0, 1, 'queued', now())`
    const started = yield* Queue.unbounded<number>()
    const finish = yield* Deferred.make<void>()
    const idled = yield* Deferred.make<void>()
    const claims = { empty: 0 }
    yield* runJobWorkers({
      kind,
      queue: {
        ...queue,
        claim: (claim) =>
          Effect.tap(queue.claim(claim), (row) =>
            Option.isNone(row)
              ? Effect.zipRight(Effect.sync(() => claims.empty++), Deferred.succeed(idled, undefined))
              : Effect.void)
      },
      options: { concurrency, pollInterval: poll, lease: Duration.minutes(1), maxAttempts: 3 },
      run: (row) =>
        Effect.zipRight(Queue.offer(started, row.id), Deferred.await(finish)).pipe(
          Effect.as({ bars: 0, waits: 0 })
        ),
      ...(drained === undefined ? {} : { drained })
    }).pipe(Effect.provideService(JobWakeup, wakeup))
    yield* Deferred.await(idled)
    return { sql, insert, started, finish, claims }
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`job workers over ${storage.name}`, () => {
    layer(JobWakeup.Default.pipe(Layer.provideMerge(DatabaseLive), Layer.provideMerge(TestConfig(storage))), {
      timeout: "120 seconds"
    })((it) => {
      it.scoped("an idle worker starts a job queued and woken for at once, not at its next poll", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const { finish, insert, started } = yield* setup("woken", 1, never)
          yield* insert
          yield* (yield* JobWakeup).wake(kind)
          expect(yield* eventually(Queue.take(started))).toBeGreaterThan(0)
          yield* Deferred.succeed(finish, undefined)
        })))

      it.scoped("the wake-up reaches workers of another instance, and is sent when the job's transaction commits", () =>
        TestServices.provideLive(Effect.gen(function*() {
          // Another instance: on PostgreSQL a client and listener of its own; PGlite has one client, so a listener.
          const elsewhere = Context.get(
            yield* (storage.name === "postgres"
              ? Layer.build(JobWakeup.Default.pipe(Layer.provide(DatabaseLive)))
              : Layer.build(JobWakeup.Default)),
            JobWakeup
          )
          const { finish, insert, sql, started } = yield* setup("elsewhere", 1, never, elsewhere)
          yield* sql.withTransaction(Effect.zipRight(insert, (yield* JobWakeup).wake(kind)))
          expect(yield* eventually(Queue.take(started))).toBeGreaterThan(0)
          yield* Deferred.succeed(finish, undefined)
        })))

      it.scoped("one wake-up for several jobs starts as many idle workers as there are jobs", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const { finish, insert, started } = yield* setup("relayed", 2, never)
          yield* insert
          yield* insert
          yield* (yield* JobWakeup).wake(kind)
          // Both run at once: neither finishes before the other has started.
          const first = yield* eventually(Queue.take(started))
          const second = yield* eventually(Queue.take(started))
          expect(second).not.toBe(first)
          yield* Deferred.succeed(finish, undefined)
        })))

      it.scoped("idle workers poll once per interval between them, not once each", () =>
        Effect.gen(function*() {
          const { claims } = yield* setup("polls", 3, Duration.seconds(30))
          const settled = Effect.sleep("300 millis").pipe(TestServices.provideLive)
          // Each worker's first claim finds nothing (a wake-up left by an earlier test may add one).
          yield* eventually(Effect.repeat(Effect.sync(() => claims.empty), { until: (n) => n >= 3 }))
          yield* settled
          const idle = claims.empty
          for (let i = 1; i <= 10; i++) {
            yield* TestClock.adjust("30 seconds")
            yield* eventually(Effect.repeat(Effect.sync(() => claims.empty), { until: (n) => n >= idle + i }))
          }
          // One claim per interval: a claim per worker per interval would have made 30.
          yield* settled
          expect(claims.empty - idle).toBe(10)
        }))

      it.scoped("a worker that runs out of jobs says so once; its idle polls after do not", () =>
        Effect.gen(function*() {
          let drained = 0
          const { claims, finish, insert, started } = yield* setup(
            "drained",
            2,
            Duration.seconds(30),
            undefined,
            Effect.sync(() => drained++)
          )
          // Idle workers finding nothing before they ever ran a job: not a queue run dry.
          const settled = Effect.sleep("300 millis").pipe(TestServices.provideLive)
          yield* eventually(Effect.repeat(Effect.sync(() => claims.empty), { until: (n) => n >= 2 }))
          yield* settled
          expect(drained).toBe(0)
          yield* insert
          yield* insert
          yield* insert
          yield* (yield* JobWakeup).wake(kind)
          // Both workers hold a job before any ends, so each runs out once the three have run.
          yield* eventually(Queue.take(started))
          yield* eventually(Queue.take(started))
          yield* Deferred.succeed(finish, undefined)
          yield* eventually(Queue.take(started))
          yield* eventually(Effect.repeat(Effect.sync(() => drained), { until: (n) => n >= 2 }))
          const idle = claims.empty
          for (let i = 1; i <= 5; i++) {
            yield* TestClock.adjust("30 seconds")
            yield* eventually(Effect.repeat(Effect.sync(() => claims.empty), { until: (n) => n >= idle + i }))
          }
          yield* settled
          expect(drained).toBe(2)
        }))

      it.scoped("a job whose wake-up was lost is found by the next poll", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const { finish, insert, started } = yield* setup("lost", 1, Duration.millis(50))
          yield* insert
          expect(yield* eventually(Queue.take(started))).toBeGreaterThan(0)
          yield* Deferred.succeed(finish, undefined)
        })))
    })
  })
}
