import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createProgram } from "../support/Automation.js"
import { BacktestServer, shortRun } from "../support/Backtests.js"
import { smaGrid, smaProgram, waitForOptimization } from "../support/Optimizations.js"
import { call, expectError, signUp } from "../support/TestServer.js"

/** A user's program and a finished optimisation of it. */
const finishedOptimization = (body: object) =>
  Effect.gen(function*() {
    const user = yield* signUp()
    const program = yield* createProgram(user.token, smaProgram)
    const queued = yield* call("POST", `/api/programs/${program}/optimizations`, { token: user.token, body })
    expect(queued.status).toBe(202)
    const base = `/api/programs/${program}/optimizations/${queued.body.id}`
    const optimization = yield* waitForOptimization(user.token, program, queued.body.id)
    const trials = (yield* call("GET", `${base}/trials?limit=500`, { token: user.token })).body.trials
    return { ...user, program, base, optimization, trials }
  })

const robustness = (token: string | undefined, base: string, body: object = {}) =>
  call("POST", `${base}/robustness`, token === undefined ? { body } : { token, body })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`optimisation robustness over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "180 seconds" })((it) => {
      it.effect("POST …/optimizations/:id/robustness answers the Monte Carlo, deflated Sharpe, PBO and sensitivity of a completed grid", () =>
        Effect.gen(function*() {
          const { base, optimization, token, trials } = yield* finishedOptimization(smaGrid)
          expect(optimization.status).toBe("completed")
          const reply = yield* robustness(token, base)
          expect(reply.status).toBe(200)
          const report = reply.body
          expect(report).toMatchObject({ optimization_id: optimization.id, fold: 0 })
          const best = optimization.result.best

          // Monte Carlo on the best point's run over the whole range: reordering keeps the trades' sum.
          const run = trials.find((t: any) => t.role === "best")
          expect(report.monte_carlo).toMatchObject({ runs: 1000, seed: 1, method: "reshuffle", initial_balance: 10000 })
          expect(report.monte_carlo.trades).toBe(run.metrics.total_trades)
          expect(report.monte_carlo.final_return_percent.p50).toBeCloseTo(best.metrics.total_pnl_percent, 9)

          // 336 hourly bars give each search trial a curve of 256 points: 256 returns, the first from the balance.
          const search = trials.filter((t: any) => t.role === "search")
          expect(search).toHaveLength(9)
          expect(report.deflated_sharpe).toMatchObject({ returns: 256, trials: 9 })
          expect(report.deflated_sharpe.trials_sharpe_variance).toBeGreaterThan(0)
          expect(report.deflated_sharpe.expected_max_sharpe).toBeGreaterThan(0)
          expect(report.deflated_sharpe.deflated_sharpe).toBeLessThan(report.deflated_sharpe.probabilistic_sharpe)

          expect(report.overfitting).toMatchObject({ partitions: 16, periods: 256, trials: 9, combinations: 12_870 })
          expect(report.overfitting.probability_of_overfitting).toBeGreaterThanOrEqual(0)
          expect(report.overfitting.probability_of_overfitting).toBeLessThanOrEqual(1)
          // With 9 trials ω̄ is k / 10: λ stays within ±ln 9.
          expect(report.overfitting.logits.p5).toBeGreaterThanOrEqual(-Math.log(9) - 1e-9)
          expect(report.overfitting.logits.p95).toBeLessThanOrEqual(Math.log(9) + 1e-9)

          // Along each parameter, the grid's three values with the other at the best's, as the trials list has them.
          expect(report.sensitivity.map((s: any) => s.parameter)).toEqual(["fast", "slow"])
          for (const { parameter, values } of report.sensitivity) {
            const other = parameter === "fast" ? "slow" : "fast"
            const line = search
              .filter((t: any) => t.params[other] === best.params[other])
              .map((t: any) => ({ value: t.params[parameter], objective: t.objective }))
              .sort((a: any, b: any) => a.value - b.value)
            expect(values).toEqual(line)
            expect(values).toContainEqual({ value: best.params[parameter], objective: best.objective })
          }

          // Seeded: the same request gives the same figures; fewer partitions, fewer combinations.
          expect((yield* robustness(token, base)).body).toEqual(report)
          const four = (yield* robustness(token, base, {
            partitions: 4,
            monte_carlo: { runs: 200, seed: 9, method: "resample" }
          })).body
          expect(four.overfitting).toMatchObject({ partitions: 4, periods: 256, combinations: 6 })
          expect(four.monte_carlo).toMatchObject({ runs: 200, seed: 9, method: "resample" })
        }))

      it.effect("with walk-forward, the figures are of the last fold's search and its best point's run out of sample", () =>
        Effect.gen(function*() {
          const { base, optimization, token, trials } = yield* finishedOptimization({
            ...smaGrid,
            walk_forward: { mode: "rolling", folds: 2, in_sample_bars: 120, out_of_sample_bars: 48 }
          })
          expect(optimization.status).toBe("completed")
          const reply = yield* robustness(token, base, { partitions: 4 })
          expect(reply.status).toBe(200)
          expect(reply.body.fold).toBe(1)
          const out = trials.find((t: any) => t.fold === 1 && t.role === "out_of_sample")
          expect(reply.body.monte_carlo.trades).toBe(out.metrics.total_trades)
          // 120 bars in sample keep every point: 120 returns, 30 per block.
          expect(reply.body.deflated_sharpe).toMatchObject({ returns: 120, trials: 9 })
          expect(reply.body.overfitting).toMatchObject({ periods: 120, trials: 9, combinations: 6 })
        }))

      it.effect("a bad body answers 400 naming the field, no token 401, another user's 403, an unknown id or another program 404, an unfinished one 409", () =>
        Effect.gen(function*() {
          const { base, program, token } = yield* finishedOptimization(smaGrid)
          const cases: Array<[object, string]> = [
            [{ partitions: 3 }, "partitions"],
            [{ partitions: 18 }, "partitions"],
            [{ monte_carlo: { runs: 0 } }, "monte_carlo.runs"],
            [{ monte_carlo: { method: "bootstrap" } }, "monte_carlo.method"],
            [{ trials: 5 }, "trials"]
          ]
          for (const [body, field] of cases) {
            const reply = yield* robustness(token, base, body)
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: any) => i.path).join(" ")).toContain(field)
          }
          expectError(yield* robustness(undefined, base), 401, "unauthorized")
          const other = yield* signUp()
          expectError(yield* robustness(other.token, base), 403, "forbidden")
          expectError(
            yield* robustness(token, `/api/programs/${program}/optimizations/999999`),
            404,
            "not_found"
          )
          const another = yield* createProgram(token, smaProgram)
          expectError(
            yield* robustness(token, base.replace(`/programs/${program}/`, `/programs/${another}/`)),
            404,
            "not_found"
          )

          // Cancelled before it finished: there is no result to judge, as for a backtest that has not completed.
          const queued = yield* call("POST", `/api/programs/${program}/optimizations`, {
            token,
            body: { ...shortRun, search: "random", space: { fast: {}, slow: {} }, budget: { trials: 500 } }
          })
          expect(queued.status).toBe(202)
          const unfinished = `/api/programs/${program}/optimizations/${queued.body.id}`
          expect((yield* call("POST", `${unfinished}/cancel`, { token })).status).toBe(200)
          expectError(yield* robustness(token, unfinished), 409, "conflict")
        }))
    })
  })
}
