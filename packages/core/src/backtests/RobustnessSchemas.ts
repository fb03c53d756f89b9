import { Schema } from "effect"
import { defaulted } from "../http/Defaults.js"
import { BacktestId } from "./Backtest.js"

/** The most Monte Carlo runs one request asks for. */
export const maxMonteCarloRuns = 10_000

/** What a robustness request leaves out. */
export const robustnessDefaults = {
  runs: 1000,
  seed: 1,
  method: "reshuffle",
  ruin_drawdown_percent: 50,
  trials: 1
} as const

/** `reshuffle`: the trades in a random order, each once; `resample`: as many trades drawn with replacement. */
export const MonteCarloMethod = Schema.Literal("reshuffle", "resample")

/** How to run the Monte Carlo on a backtest's trades; every field has its default. */
export const MonteCarloRequest = Schema.Struct({
  runs: defaulted(Schema.Int.pipe(Schema.between(1, maxMonteCarloRuns)), robustnessDefaults.runs),
  /** The generator's seed (an unsigned 32-bit integer): the same seed gives the same figures. */
  seed: defaulted(Schema.Int.pipe(Schema.between(0, 2 ** 32 - 1)), robustnessDefaults.seed),
  method: defaulted(MonteCarloMethod, robustnessDefaults.method),
  /** A run is ruined when its equity falls to or below the initial balance less this percent of it. */
  ruin_drawdown_percent: defaulted(
    Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(100)),
    robustnessDefaults.ruin_drawdown_percent
  )
})
export type MonteCarloRequest = typeof MonteCarloRequest.Type

/**
 * `POST /api/programs/backtest/{id}/robustness`. `trials` is how many configurations were tried to
 * find this one; above 1 the service requires `trials_sharpe_variance`, the variance of their
 * per-period Sharpe ratios.
 */
export const RobustnessRequest = Schema.Struct({
  monte_carlo: Schema.optionalWith(MonteCarloRequest, { nullable: true, exact: true }),
  trials: defaulted(Schema.Int.pipe(Schema.between(1, 1_000_000)), robustnessDefaults.trials),
  trials_sharpe_variance: Schema.optionalWith(Schema.Number.pipe(Schema.finite(), Schema.nonNegative()), {
    nullable: true,
    exact: true
  })
}).annotations({
  parseOptions: { errors: "all" },
  examples: [
    {},
    { monte_carlo: { runs: 5000, seed: 7, method: "resample", ruin_drawdown_percent: 30 } },
    { trials: 100, trials_sharpe_variance: 0.002 }
  ]
})
export type RobustnessRequest = typeof RobustnessRequest.Type

/** Percentiles of a Monte Carlo figure across its runs (linear between ranks). */
export const PercentilesSchema = Schema.Struct({
  p5: Schema.Number,
  p25: Schema.Number,
  p50: Schema.Number,
  p75: Schema.Number,
  p95: Schema.Number
})

/** The Monte Carlo on the trades, with the inputs it ran with. */
export const MonteCarloFiguresSchema = Schema.Struct({
  method: MonteCarloMethod,
  runs: Schema.Int,
  seed: Schema.Int,
  ruin_drawdown_percent: Schema.Number,
  /** The trades each run orders or draws. */
  trades: Schema.Int,
  initial_balance: Schema.Number,
  /** (final equity − initial balance) / initial balance, in percent. */
  final_return_percent: PercentilesSchema,
  /** The largest fall from a running peak of the trade-by-trade equity, in percent of that peak. */
  max_drawdown_percent: PercentilesSchema,
  /** The share (0..1) of runs whose equity fell to or below the ruin threshold. */
  probability_of_ruin: Schema.Number
})

/** The deflated Sharpe ratio of the stored equity curve's returns, with what it read. */
export const DeflatedSharpeSchema = Schema.Struct({
  /** T: the returns between consecutive points of the stored curve, the first from the initial balance. */
  returns: Schema.Int,
  /** Their mean over their standard deviation: per point of the curve, not annualised. */
  sharpe: Schema.Number,
  skewness: Schema.Number,
  /** Not excess: 3 for normal returns. */
  kurtosis: Schema.Number,
  trials: Schema.Int,
  trials_sharpe_variance: Schema.Number,
  /** The Sharpe ratio the best of `trials` would show by luck; 0 for one trial. */
  expected_max_sharpe: Schema.Number,
  /** The probability that the true Sharpe ratio is above 0. */
  probabilistic_sharpe: Schema.Number,
  /** The probability that it is above `expected_max_sharpe`. */
  deflated_sharpe: Schema.Number
})

/** `POST /api/programs/backtest/{id}/robustness`: the figures of one completed backtest. */
export class BacktestRobustnessReport extends Schema.Class<BacktestRobustnessReport>("BacktestRobustnessReport")({
  backtest_id: BacktestId,
  monte_carlo: MonteCarloFiguresSchema,
  /** Null when the curve has fewer than two returns or they do not vary. */
  deflated_sharpe: Schema.NullOr(DeflatedSharpeSchema)
}) {}
