import { expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { isFinished, marketNow, shortRun, tradingProgram, waitForBacktest } from "../support/Backtests.js"
import { call, signUp, TestServer } from "../support/TestServer.js"

const retention = {
  ...platformOptions().retention,
  purgeInterval: Duration.hours(1),
  backtests: Option.some(Duration.days(1))
}

// Idle workers poll hourly (a submission wakes them at once), so moving the clock by days steps through few polls.
const RetentionServer = TestServer({
  config: {
    retention,
    backtests: { concurrency: 1, pollInterval: Duration.hours(1), lease: Duration.seconds(30), maxAttempts: 3 }
  }
}).pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(marketNow))))

layer(RetentionServer, { timeout: "120 seconds" })("backtest retention", (it) => {
  it.effect(
    "a backtest finished longer ago than BACKTEST_RETENTION_DAYS is deleted, a program's or an AI account's; a recent one stays",
    () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("retention")
        const program = yield* call("POST", "/api/programs", { token, body: { name: "p", code: tradingProgram } })
        const run = () =>
          Effect.gen(function*() {
            const job = yield* call("POST", `/api/programs/${program.body.id}/backtest`, { token, body: shortRun })
            expect(job.status).toBe(202)
            expect((yield* waitForBacktest(token, job.body.id, isFinished)).status).toBe("completed")
            return job.body.id as number
          })
        const account = (yield* call("POST", "/api/account", { token, body: { name: "ai" } })).body
        const aiUrl = (id: number) => `/api/account/${account.id}/backtests/${id}`
        const runAi = () =>
          Effect.gen(function*() {
            const job = yield* call("POST", `/api/account/${account.id}/backtest`, {
              token,
              body: { start: shortRun.start, end: "2025-01-02T00:00:00Z", mode: "replay" }
            })
            expect(job.status).toBe(202)
            const deadline = Date.now() + 60_000
            while (!isFinished((yield* call("GET", aiUrl(job.body.id), { token })).body)) {
              if (Date.now() > deadline) return yield* Effect.die(new Error("AI backtest never finished"))
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
            }
            return job.body.id as number
          })
        const old = yield* run()
        const oldAi = yield* runAi()
        yield* TestClock.adjust("30 hours")
        const recent = yield* run()
        const recentAi = yield* runAi()
        yield* TestClock.adjust("1 hour")

        const gone = (path: string) =>
          Effect.gen(function*() {
            const deadline = Date.now() + 60_000
            let status = 200
            while (status !== 404 && Date.now() < deadline) {
              status = (yield* call("GET", path, { token })).status
              if (status !== 404) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
            }
            return status
          })
        expect(yield* gone(`/api/programs/backtest/${old}`)).toBe(404)
        expect(yield* gone(aiUrl(oldAi))).toBe(404)
        expect((yield* call("GET", `/api/programs/backtest/${recent}`, { token })).status).toBe(200)
        expect((yield* call("GET", aiUrl(recentAi), { token })).status).toBe(200)
        const history = yield* call("GET", "/api/programs/backtest/history", { token })
        expect(history.body.backtests.map((b: { id: number }) => b.id)).toEqual([recent])
      }),
    180_000
  )
})
