import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import {
  BacktestServer,
  isFinished,
  shortRun,
  throwingProgram,
  tradingProgram,
  untilNoBusyBacktestThreads,
  waitForBacktest
} from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

/** A user with one program and one finished backtest of it over `shortRun`. */
const finishedBacktest = (code = tradingProgram) =>
  Effect.gen(function*() {
    const user = yield* signUp()
    const program = yield* call("POST", "/api/programs", { token: user.token, body: { name: "Robust", code } })
    expect(program.status).toBe(201)
    const submitted = yield* call("POST", `/api/programs/${program.body.id}/backtest`, {
      token: user.token,
      body: shortRun
    })
    expect(submitted.status).toBe(202)
    const backtest = yield* waitForBacktest(user.token, submitted.body.id, isFinished)
    return { ...user, backtest }
  })

const robustness = (token: string | undefined, id: number, body: Record<string, unknown> = {}) =>
  call("POST", `/api/programs/backtest/${id}/robustness`, token === undefined ? { body } : { token, body })

const inOrder = (p: Record<string, number>) => {
  const values = [p.p5!, p.p25!, p.p50!, p.p75!, p.p95!]
  expect(values).toEqual([...values].sort((a, b) => a - b))
}

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`backtest robustness over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/programs/backtest/:id/robustness answers the Monte Carlo and the deflated Sharpe ratio of a completed backtest", () =>
        Effect.gen(function*() {
          const { backtest, token } = yield* finishedBacktest()
          expect(backtest.status).toBe("completed")
          expect(backtest.trades.length).toBeGreaterThan(5)
          const reply = yield* robustness(token, backtest.id)
          expect(reply.status).toBe(200)
          const { deflated_sharpe: dsr, monte_carlo: mc } = reply.body
          expect(reply.body.backtest_id).toBe(backtest.id)
          expect(mc).toMatchObject({
            method: "reshuffle",
            runs: 1000,
            seed: 1,
            ruin_drawdown_percent: 50,
            trades: backtest.trades.length,
            initial_balance: 10000
          })
          // Reordering the trades keeps their sum: every run ends at the backtest's total return.
          for (const value of Object.values(mc.final_return_percent) as Array<number>) {
            expect(value).toBeCloseTo(backtest.metrics.total_pnl_percent, 9)
          }
          inOrder(mc.max_drawdown_percent)
          expect(mc.max_drawdown_percent.p5).toBeGreaterThanOrEqual(0)
          // Half the balance a trade at most, on a quiet fortnight: nothing near ruin.
          expect(mc.probability_of_ruin).toBe(0)
          // 336 hourly bars keep their whole curve: the per-bar Sharpe ratio is the metrics' de-annualised.
          expect(backtest.equity_curve).toHaveLength(336)
          expect(dsr.returns).toBe(336)
          expect(dsr.sharpe * Math.sqrt(365 * 24)).toBeCloseTo(backtest.metrics.sharpe, 9)
          expect(dsr).toMatchObject({ trials: 1, trials_sharpe_variance: 0, expected_max_sharpe: 0 })
          expect(dsr.deflated_sharpe).toBe(dsr.probabilistic_sharpe)
          expect(dsr.kurtosis).toBeGreaterThan(1)
          expect(dsr.probabilistic_sharpe).toBeGreaterThan(0)
          expect(dsr.probabilistic_sharpe).toBeLessThan(1)
        }))

      it.effect("the same seed gives the same figures; resample with another seed gives others, around the same trades", () =>
        Effect.gen(function*() {
          const { backtest, token } = yield* finishedBacktest()
          const resample = { runs: 2000, seed: 11, method: "resample", ruin_drawdown_percent: 5 }
          const first = yield* robustness(token, backtest.id, { monte_carlo: resample })
          expect(first.status).toBe(200)
          expect((yield* robustness(token, backtest.id, { monte_carlo: resample })).body).toEqual(first.body)
          const other = yield* robustness(token, backtest.id, { monte_carlo: { ...resample, seed: 12 } })
          expect(other.body.monte_carlo.final_return_percent).not.toEqual(first.body.monte_carlo.final_return_percent)
          const mc = first.body.monte_carlo
          inOrder(mc.final_return_percent)
          inOrder(mc.max_drawdown_percent)
          // Drawn with replacement, the final return spreads on both sides of the backtest's.
          expect(mc.final_return_percent.p5).toBeLessThan(mc.final_return_percent.p95)
          expect(mc.probability_of_ruin).toBeGreaterThanOrEqual(0)
          expect(mc.probability_of_ruin).toBeLessThanOrEqual(1)
          // More trials, the same returns: a higher bar to clear, so a lower probability.
          const deflated = yield* robustness(token, backtest.id, { trials: 100, trials_sharpe_variance: 0.01 })
          expect(deflated.status).toBe(200)
          const dsr = deflated.body.deflated_sharpe
          expect(dsr.expected_max_sharpe).toBeGreaterThan(0)
          expect(dsr.deflated_sharpe).toBeLessThan(dsr.probabilistic_sharpe)
          expect(dsr.probabilistic_sharpe).toBe(first.body.deflated_sharpe.probabilistic_sharpe)
        }))

      it.effect("bad input answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const { backtest, token } = yield* finishedBacktest()
          const bad = [
            { monte_carlo: { runs: 0 } },
            { monte_carlo: { runs: 20_000 } },
            { monte_carlo: { runs: 1.5 } },
            { monte_carlo: { method: "bootstrap" } },
            { monte_carlo: { ruin_drawdown_percent: 0 } },
            { monte_carlo: { ruin_drawdown_percent: 120 } },
            { monte_carlo: { seed: -1 } },
            { trials: 0 },
            { trials_sharpe_variance: -1 },
            { runs: 100 }
          ]
          for (const body of bad) expectError(yield* robustness(token, backtest.id, body), 400, "invalid_input")
          const missing = yield* robustness(token, backtest.id, { trials: 10 })
          expectError(missing, 400, "invalid_input")
          expect(missing.body.issues).toEqual([
            { path: "trials_sharpe_variance", message: "is required when trials is above 1" }
          ])
        }))

      it.effect("without a token 401, an unknown backtest 404, another user's 403 as GET answers", () =>
        Effect.gen(function*() {
          const { backtest, token } = yield* finishedBacktest()
          expectError(yield* robustness(undefined, backtest.id), 401, "unauthorized")
          expectError(yield* robustness(token, 999_999), 404, "not_found")
          const other = yield* signUp("other")
          expectError(
            yield* call("GET", `/api/programs/backtest/${backtest.id}`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(yield* robustness(other.token, backtest.id), 403, "forbidden")
        }))

      it.effect("a backtest that has not completed answers 409 conflict: failed, queued or running", () =>
        Effect.gen(function*() {
          const { backtest, token } = yield* finishedBacktest(throwingProgram)
          expect(backtest.status).toBe("failed")
          expectError(yield* robustness(token, backtest.id), 409, "conflict")
          const program = yield* call("POST", "/api/programs", { token, body: { name: "Long", code: tradingProgram } })
          // Eleven months of minutes: it runs far longer than the test.
          const long = { symbol: "BTC", timeframe: "1m", start: "2024-06-01T00:00:00Z", end: "2025-05-01T00:00:00Z" }
          const submitted = yield* call("POST", `/api/programs/${program.body.id}/backtest`, { token, body: long })
          expect(submitted.status).toBe(202)
          const unfinished = yield* robustness(token, submitted.body.id)
          expectError(unfinished, 409, "conflict")
          expect(unfinished.body.error).toMatch(/is (queued|running): robustness needs a completed backtest/)
          expect((yield* call("POST", `/api/programs/backtest/${submitted.body.id}/cancel`, { token })).status).toBe(
            200
          )
          yield* untilNoBusyBacktestThreads()
        }))
    })
  })
}
