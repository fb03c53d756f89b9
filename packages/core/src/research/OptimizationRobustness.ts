import { Effect, Option } from "effect"
import { returnsOf } from "../backtests/BacktestMetrics.js"
import { deflatedSharpeOf, monteCarloOf } from "../backtests/BacktestRobustness.js"
import { returnMoments } from "../backtests/Robustness.js"
import { Conflict } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import type { ProgramId } from "../programs/Program.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import {
  defaultPartitions,
  type OptimizationId,
  OptimizationRobustnessReport,
  type OptimizationRobustnessRequest
} from "./Optimization.js"
import { OptimizationRobustnessRepo } from "./OptimizationRobustnessRepo.js"
import { Optimizations } from "./Optimizations.js"
import { OptimizationsRepo } from "./OptimizationsRepo.js"
import { cscv, sensitivity } from "./Overfitting.js"
import type { Point } from "./Search.js"

/** The sample variance (with n − 1) of `xs`; 0 for fewer than two. */
const variance = (xs: ReadonlyArray<number>) => {
  if (xs.length < 2) return 0
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length
  return xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)
}

/**
 * Robustness figures of the caller's completed optimisations: Monte Carlo on the best point's run,
 * and, of the search that chose it, the deflated Sharpe ratio, the probability of backtest
 * overfitting and the objective's sensitivity to each parameter.
 */
export class OptimizationRobustness extends Effect.Service<OptimizationRobustness>()(
  "@trading-platform/core/OptimizationRobustness",
  {
    effect: Effect.gen(function*() {
      const optimizations = yield* Optimizations
      const repo = yield* OptimizationsRepo
      const curves = yield* OptimizationRobustnessRepo

      const report = (
        caller: CurrentUserShape,
        programId: ProgramId,
        id: OptimizationId,
        request: OptimizationRobustnessRequest
      ) =>
        Effect.gen(function*() {
          // The same 404/403 as GET /api/programs/{id}/optimizations/{optimization_id}.
          const row = yield* optimizations.ofProgram(caller, programId, id, repo.findFinished)
          if (row.status !== "completed" || row.result === null) {
            return yield* new Conflict({
              error: `Optimization ${id} is ${row.status}: robustness needs a completed optimisation`
            })
          }
          const r = row.request
          const initial = r.initial_balance!
          // The result's best point is the last fold's with walk-forward, whose only full run is out of sample.
          const fold = r.walk_forward == null ? 0 : row.result.folds.length - 1
          const best = row.result.best
          const run = Option.getOrNull(
            yield* repo.bestOf({ id, fold, role: r.walk_forward == null ? "best" : "out_of_sample" })
          )
          const trials = yield* curves.searchTrials({ id, fold })
          // The trials of a fold run the same bars, so their curves share their points (older trials kept none).
          const length = trials.find((t) => t.curve.length > 0)?.curve.length ?? 0
          const drawn = trials.filter((t) => t.curve.length > 0 && t.curve.length === length)
          const returns = drawn.map((t) => returnsOf(initial, t.curve.map((p) => p.equity)))
          const sharpes = returns.map((x) => returnMoments(x)?.sharpe ?? 0)
          const bestCurve = drawn.find((t) => t.trial === best?.trial)?.curve
          return new OptimizationRobustnessReport({
            optimization_id: id,
            fold,
            monte_carlo: run?.result == null
              ? null
              : monteCarloOf(request.monte_carlo, run.result.outcome.trades, initial),
            deflated_sharpe: bestCurve === undefined
              ? null
              : deflatedSharpeOf(initial, bestCurve, drawn.length, variance(sharpes)),
            overfitting: cscv({ returns, partitions: request.partitions ?? defaultPartitions }) ?? null,
            sensitivity: best === null
              ? []
              : sensitivity(row.space, r.search, trials, best.params as Point, best.objective)
          })
        }).pipe(
          dieOnStorageFailure,
          withRequestSpan("OptimizationRobustness.report", { attributes: { userId: caller.id, optimizationId: id } })
        )

      return { report } as const
    }),
    dependencies: [OptimizationRobustnessRepo.Default]
  }
) {}
