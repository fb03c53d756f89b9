import { Effect } from "effect"
import { Conflict } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import type { BacktestId } from "./Backtest.js"
import { returnsOf } from "./BacktestMetrics.js"
import { BacktestsRepo } from "./BacktestsRepo.js"
import { deflatedSharpe, monteCarlo, returnMoments } from "./Robustness.js"
import {
  BacktestRobustnessReport,
  type DeflatedSharpeSchema,
  type MonteCarloFiguresSchema,
  type MonteCarloRequest,
  robustnessDefaults,
  type RobustnessRequest
} from "./RobustnessSchemas.js"

/** The Monte Carlo of a run's trades, with the settings it ran with (the request's, or their defaults). */
export const monteCarloOf = (
  request: MonteCarloRequest | undefined,
  trades: ReadonlyArray<{ readonly pnl: number }>,
  initialBalance: number
): typeof MonteCarloFiguresSchema.Type => {
  const settings = { ...robustnessDefaults, ...request }
  return {
    method: settings.method,
    runs: settings.runs,
    seed: settings.seed,
    ruin_drawdown_percent: settings.ruin_drawdown_percent,
    trades: trades.length,
    initial_balance: initialBalance,
    ...monteCarlo({
      pnls: trades.map((t) => t.pnl),
      initialBalance,
      runs: settings.runs,
      seed: settings.seed,
      method: settings.method,
      ruinPercent: settings.ruin_drawdown_percent
    })
  }
}

/** The moments of an equity curve's returns, the first from the initial balance (see `returnMoments`). */
export const curveMoments = (initialBalance: number, curve: ReadonlyArray<{ readonly equity: number }>) =>
  returnMoments(returnsOf(initialBalance, curve.map((p) => p.equity)))

/** The deflated Sharpe ratio of an equity curve's returns given the trials; null when they are too few or flat. */
export const deflatedSharpeOf = (
  initialBalance: number,
  curve: ReadonlyArray<{ readonly equity: number }>,
  trials: number,
  variance: number
): typeof DeflatedSharpeSchema.Type | null => {
  const moments = curveMoments(initialBalance, curve)
  return moments === undefined ? null : {
    returns: moments.count,
    sharpe: moments.sharpe,
    skewness: moments.skewness,
    kurtosis: moments.kurtosis,
    trials,
    trials_sharpe_variance: variance,
    ...deflatedSharpe(moments, trials, variance)
  }
}

/** Robustness figures of the caller's completed backtests, computed on their stored result. */
export class BacktestRobustness extends Effect.Service<BacktestRobustness>()(
  "@trading-platform/core/BacktestRobustness",
  {
    effect: Effect.gen(function*() {
      const repo = yield* BacktestsRepo

      const report = (caller: CurrentUserShape, id: BacktestId, request: RobustnessRequest) =>
        Effect.gen(function*() {
          const trials = request.trials ?? robustnessDefaults.trials
          // The spread of the trials' Sharpe ratios is what deflates the best of them; one trial has none.
          if (trials > 1 && request.trials_sharpe_variance === undefined) {
            return yield* invalidField("trials_sharpe_variance", "is required when trials is above 1")
          }
          const variance = request.trials_sharpe_variance ?? 0
          // The same 404/403 as GET /api/programs/backtest/{id}.
          const row = yield* repo.findById(id).pipe(ownedBy(caller, `Backtest ${id}`))
          if (row.status !== "completed" || row.result === null) {
            return yield* new Conflict({
              error: `Backtest ${id} is ${row.status}: robustness needs a completed backtest`
            })
          }
          return new BacktestRobustnessReport({
            backtest_id: id,
            monte_carlo: monteCarloOf(request.monte_carlo, row.result.trades, row.initial_balance),
            deflated_sharpe: deflatedSharpeOf(row.initial_balance, row.result.equity_curve, trials, variance)
          })
        }).pipe(
          dieOnStorageFailure,
          withRequestSpan("BacktestRobustness.report", { attributes: { userId: caller.id, backtestId: id } })
        )

      return { report } as const
    })
  }
) {}
