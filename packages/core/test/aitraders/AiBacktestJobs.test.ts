import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Accounts, AiBacktests } from "@trading-platform/core"
import { Effect } from "effect"
import type { AiBacktestId } from "../../src/aitraders/AiBacktest.js"
import type { CurrentUserShape } from "../../src/users/Authentication.js"
import { newCaller } from "../support/Callers.js"
import { durableStorage, type Instance, on, startInstance, withScope } from "../support/Instances.js"
import { testStorages } from "../support/TestStorage.js"

/** Two weeks of hourly bars, a decision every four hours (84 slots) by the built-in model. */
const twoWeeks = {
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-15T00:00:00Z",
  timeframe: "1h",
  interval_minutes: 240
} as const

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Polls until the backtest has finished; dies at the deadline. */
const finished = (instance: Instance, caller: CurrentUserShape, accountId: number, id: number) =>
  on(
    instance,
    Effect.gen(function*() {
      const backtests = yield* AiBacktests
      const deadline = Date.now() + 90_000
      for (;;) {
        const backtest = yield* backtests.get(caller, accountId as any, id as AiBacktestId)
        if (["completed", "failed", "cancelled"].includes(backtest.status)) return backtest
        if (Date.now() > deadline) return yield* Effect.die(new Error(`still ${backtest.status}`))
        yield* realPause
      }
    })
  )

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`AI backtest jobs over ${storage.name}`, () => {
    it.scopedLive(
      "after a restart, an AI backtest left running under an expired lease runs again; run once more, every call is cached",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage(storage, "tp-ai-jobs-")
          // The first instance queues the job and "dies" mid-run: the row says running, the lease has expired.
          const { accountId, caller, id } = yield* withScope((scope) =>
            Effect.gen(function*() {
              const first = yield* startInstance(storageConfig, scope, { concurrency: 0 })
              return yield* on(
                first,
                Effect.gen(function*() {
                  const caller = yield* newCaller("aijobs")
                  const account = yield* Effect.flatMap(Accounts, (a) => a.create(caller, { name: "builtin" }))
                  const queued = yield* Effect.flatMap(AiBacktests, (b) => b.submit(caller, account.id, twoWeeks))
                  const sql = yield* SqlClient.SqlClient
                  const past = new Date(Date.now() - 60_000)
                  yield* sql`UPDATE ai_backtests SET status = 'running', attempts = 1, lease_until = ${past}, claimed_by = 'dead', progress = 0.5 WHERE id = ${queued.id}`
                  return { accountId: account.id, caller, id: queued.id }
                })
              )
            })
          )
          const second = yield* startInstance(storageConfig, yield* Effect.scope)
          const done = yield* finished(second, caller, accountId, id)
          expect(done).toMatchObject({
            status: "completed",
            attempts: 2,
            progress: 1,
            model: "builtin",
            stop_reason: null
          })
          expect(done.slots).toHaveLength(84)
          expect(done.model_calls! + done.cached_calls!).toBe(84)
          expect(done.model_calls).toBeGreaterThan(0)
          expect(done.metrics!.total_trades).toBeGreaterThan(0)
          // The same run again asks the built-in model nothing, and ends the same.
          const again = yield* on(second, Effect.flatMap(AiBacktests, (b) => b.submit(caller, accountId, twoWeeks)))
          const repeated = yield* finished(second, caller, accountId, again.id)
          expect(repeated).toMatchObject({ status: "completed", model_calls: 0, cached_calls: 84 })
          expect(repeated.trades).toEqual(done.trades)
          expect(repeated.metrics).toEqual(done.metrics)
          expect(repeated.slots.map((s) => s.decisions)).toEqual(done.slots.map((s) => s.decisions))
        }),
      { timeout: 150_000 }
    )
  })
}
