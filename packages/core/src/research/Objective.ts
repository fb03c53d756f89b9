import type { BacktestMetrics } from "../backtests/Backtest.js"
import type { Constraints, Objective, ObjectiveMetric } from "./Optimization.js"

const metricOf = (metrics: BacktestMetrics, name: ObjectiveMetric): number | null =>
  name === "total_return" ? metrics.total_pnl_percent : metrics[name]

/** A trial's score: null with the constraint it broke, or when a metric the objective needs is undefined (no losing trade: no profit factor). */
export interface Score {
  readonly objective: number | null
  readonly rejected: string | null
}

/** Scores a trial's metrics: the constraints first, then the objective (a metric, or the weighted sum of several). */
export const scoreOf = (metrics: BacktestMetrics, objective: Objective, constraints: Constraints): Score => {
  if (constraints.min_trades !== undefined && metrics.total_trades < constraints.min_trades) {
    return { objective: null, rejected: `min_trades: ${metrics.total_trades} trades, below ${constraints.min_trades}` }
  }
  if (
    constraints.max_drawdown_percent !== undefined && metrics.max_drawdown_percent > constraints.max_drawdown_percent
  ) {
    return {
      objective: null,
      rejected: `max_drawdown_percent: ${
        metrics.max_drawdown_percent.toFixed(2)
      }, above ${constraints.max_drawdown_percent}`
    }
  }
  const weights = typeof objective === "string" ? { [objective]: 1 } : objective.weights
  let sum = 0
  for (const [name, weight] of Object.entries(weights) as Array<[ObjectiveMetric, number]>) {
    const value = metricOf(metrics, name)
    if (value === null || !Number.isFinite(value)) return { objective: null, rejected: `${name} is undefined` }
    sum += weight * value
  }
  return { objective: sum, rejected: null }
}
