import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { type InsightResult, PlatformLive, platformOptions, Users } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { InsightsRepo } from "../../src/assistant/InsightsRepo.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const defaults = platformOptions().assistant
const lease = Duration.seconds(30)
const assistant = {
  ...defaults,
  insightJobs: { concurrency: 1, pollInterval: Duration.seconds(1), lease, maxAttempts: 3 }
}

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`insight jobs over ${storage.name}`, () => {
    layer(PlatformLive.pipe(Layer.provideMerge(TestConfig(storage, { assistant }))), { timeout: "120 seconds" })(
      (it) => {
        it.effect("a job whose worker died mid-run is resumed by another worker once its lease ends, and completes once", () =>
          Effect.gen(function*() {
            const repo = yield* InsightsRepo
            const sql = yield* SqlClient.SqlClient
            const user = yield* Effect.flatMap(
              Users,
              (users) =>
                users.register({ email: "i@example.com", username: "insight_owner", password: "long enough password" })
            )
            const now = () => Effect.map(TestClock.currentTimeMillis, (ms) => new Date(ms))
            // Queued and claimed by the worker that dies in one transaction, without waking this
            // instance's worker: a live worker's poll (its first, which under load can run after the
            // layer is up) never sees the job queued.
            const [queued, dead] = yield* sql.withTransaction(Effect.gen(function*() {
              const queued = yield* repo.insert({
                user_id: user.id,
                symbol: "BTC",
                exchange: "venue1",
                timeframe: "1h",
                prompt: null,
                now: yield* now()
              })
              const dead = Option.getOrThrow(
                yield* repo.jobs.claim({
                  now: yield* now(),
                  leaseUntil: new Date((yield* now()).getTime() + Duration.toMillis(lease)),
                  worker: "dead"
                })
              )
              return [queued, dead] as const
            }))
            expect(dead).toMatchObject({ id: queued.id, status: "running", attempts: 1 })

            const row = () => repo.findById(queued.id).pipe(Effect.map(Option.getOrThrow))
            const realPause = Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
            // Within the lease the live worker polls (given real time for its queries) and leaves it alone.
            yield* TestClock.adjust("20 seconds")
            for (let i = 0; i < 10; i++) yield* realPause
            expect(yield* row()).toMatchObject({ status: "running", attempts: 1 })

            // Past it the live worker takes the job over and completes it. Under load its poll's query may
            // still be running when the clock moves, and its next sleep then ends a test-clock poll interval
            // later: the clock moves a poll interval each pass until the job has changed hands.
            yield* TestClock.adjust("11 seconds")
            const deadline = Date.now() + 30_000
            const claimedBy = () =>
              sql<{ claimed_by: string }>`SELECT claimed_by FROM ai_insights WHERE id = ${queued.id}`.pipe(
                Effect.map(([claim]) => claim!.claimed_by)
              )
            while ((yield* claimedBy()) === "dead" && Date.now() < deadline) {
              yield* realPause
              yield* TestClock.adjust(assistant.insightJobs.pollInterval)
            }
            while ((yield* row()).status !== "completed" && Date.now() < deadline) {
              yield* realPause
            }
            const done = yield* row()
            expect(done).toMatchObject({ status: "completed", attempts: 2, error: null })
            expect(done.result).toMatchObject({ symbol: "BTC", timeframe: "1h", analyst: "built-in analyst" })
            expect(yield* claimedBy()).not.toBe("dead")

            // The dead worker coming back cannot write over it: its run is stale.
            const stale: InsightResult = { ...done.result!, summary: "stale", analyst: "dead" }
            yield* repo.jobs.complete(dead, stale, yield* now())
            yield* repo.jobs.fail(dead, "stale failure", yield* now())
            yield* repo.jobs.release(dead, "stale release", yield* now())
            expect(yield* row()).toEqual(done)
          }))
      }
    )
  })
}
