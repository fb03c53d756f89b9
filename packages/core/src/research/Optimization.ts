import { Schema } from "effect"
import { BacktestMetricsSchema, BacktestRequest, EquityPointSchema } from "../backtests/Backtest.js"
import {
  DeflatedSharpeSchema,
  MonteCarloFiguresSchema,
  MonteCarloRequest,
  PercentilesSchema
} from "../backtests/RobustnessSchemas.js"
import { defaulted, defaultedParam } from "../http/Defaults.js"
import { StoredId } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"

export const OptimizationId = StoredId.pipe(Schema.brand("OptimizationId"))
export type OptimizationId = typeof OptimizationId.Type

/** How the points are chosen: every point of a grid, seeded random draws, or the Tree-structured Parzen Estimator. */
export const SearchKind = Schema.Literal("grid", "random", "tpe")

/** The metrics an objective is made of, as the backtest's `metrics` name them (`total_return` is `total_pnl_percent`). */
export const ObjectiveMetric = Schema.Literal("sharpe", "sortino", "calmar", "total_return", "profit_factor")
export type ObjectiveMetric = typeof ObjectiveMetric.Type

/** One metric (maximised), or a weighted sum of several (a negative weight penalises one). */
export const Objective = Schema.Union(
  ObjectiveMetric,
  Schema.Struct({
    weights: Schema.Record({ key: ObjectiveMetric, value: Schema.Finite }).pipe(
      Schema.filter((w) => Object.keys(w).length > 0 || "must weigh at least one metric")
    )
  })
)
export type Objective = typeof Objective.Type

/**
 * One searched parameter: a sub-range of its declared one (`min`, `max`, both defaulting to the
 * declaration's) with a grid `step` (ints, default 1) or `steps` values (floats, default 10), or
 * a subset of a choice's `choices` (default all).
 */
export const SpaceEntry = Schema.Struct({
  min: Schema.optional(Schema.Finite),
  max: Schema.optional(Schema.Finite),
  step: Schema.optional(Schema.Int.pipe(Schema.positive())),
  steps: Schema.optional(Schema.Int.pipe(Schema.between(2, 1000))),
  choices: Schema.optional(
    Schema.Array(Schema.Union(Schema.String, Schema.Finite, Schema.Boolean)).pipe(
      Schema.minItems(1)
    )
  )
})
export type SpaceEntry = typeof SpaceEntry.Type

/** Trials that break one are kept, with no objective: they can never be the best. */
export const Constraints = Schema.Struct({
  min_trades: Schema.optional(Schema.Int.pipe(Schema.between(0, 1_000_000))),
  max_drawdown_percent: Schema.optional(Schema.Number.pipe(Schema.between(0, 100)))
})
export type Constraints = typeof Constraints.Type

/** The most trials one search may run; a walk-forward runs it once per fold. */
export const maxTrials = 10_000

export const Budget = Schema.Struct({
  /** Trials of the search (of each fold's search, with walk-forward). */
  trials: defaulted(Schema.Int.pipe(Schema.between(1, maxTrials)), 100),
  /** Seconds from the start after which no new trial starts; those queued are cancelled. */
  seconds: defaulted(Schema.Int.pipe(Schema.between(1, 7 * 24 * 3600)), 3600)
})
export type Budget = typeof Budget.Type

/**
 * Walk-forward validation: `folds` windows of `in_sample_bars` searched, each followed by
 * `out_of_sample_bars` its best point is tested on. Rolling windows move by the out-of-sample
 * length; anchored ones all start at `start` and grow by it.
 */
export const WalkForward = Schema.Struct({
  mode: defaulted(Schema.Literal("rolling", "anchored"), "rolling"),
  folds: Schema.Int.pipe(Schema.between(1, 20)),
  in_sample_bars: Schema.Int.pipe(Schema.between(10, 1_000_000)),
  out_of_sample_bars: Schema.Int.pipe(Schema.between(10, 1_000_000))
})
export type WalkForward = typeof WalkForward.Type

/** `POST /api/programs/{id}/optimizations`: a backtest's request (whose `params` fix what is not searched) and the search. */
export const OptimizationRequest = Schema.Struct({
  ...BacktestRequest.fields,
  search: SearchKind,
  /** Searched parameters by name; each must be declared by the program. */
  space: Schema.Record({ key: Schema.String, value: SpaceEntry }).pipe(
    Schema.filter((s) => Object.keys(s).length > 0 || "must name at least one parameter")
  ),
  objective: defaulted(Objective, "sharpe"),
  constraints: defaulted(Constraints, {}),
  budget: defaulted(Budget, { trials: 100, seconds: 3600 }),
  /** Seeds the random and TPE searches, so the same request proposes the same points. */
  seed: defaulted(Schema.Int.pipe(Schema.between(0, 2_147_483_647)), 1),
  walk_forward: Schema.optionalWith(WalkForward, { nullable: true })
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{
    symbol: "BTC",
    timeframe: "1h",
    start: "2025-01-01T00:00:00Z",
    end: "2025-02-01T00:00:00Z",
    search: "grid",
    space: { fast: { min: 5, max: 25, step: 5 }, slow: { min: 20, max: 100, step: 20 } },
    objective: "sharpe",
    constraints: { min_trades: 10 }
  }]
})
export type OptimizationRequest = typeof OptimizationRequest.Type

/** What a trial measured: its point, its backtest metrics and the objective (null when it failed or broke a constraint). */
export const TrialSummary = Schema.Struct({
  trial: Schema.Int,
  params: ProgramParams,
  objective: Schema.NullOr(Schema.Number),
  metrics: BacktestMetricsSchema
})
export type TrialSummary = typeof TrialSummary.Type

/** One fold of a walk-forward: its windows, the best point in sample and how that point did out of sample. */
export const Fold = Schema.Struct({
  fold: Schema.Int,
  in_sample: Schema.Struct({ start: Schema.String, end: Schema.String }),
  out_of_sample: Schema.Struct({ start: Schema.String, end: Schema.String }),
  /** Null when no trial of the fold met the constraints. */
  best: Schema.NullOr(TrialSummary),
  out_of_sample_objective: Schema.NullOr(Schema.Number),
  out_of_sample_metrics: Schema.NullOr(BacktestMetricsSchema)
})
export type Fold = typeof Fold.Type

/** What a finished optimisation stores. */
export const OptimizationResult = Schema.Struct({
  /** The best trial over the whole range (without walk-forward) or of the last fold (with it). */
  best: Schema.NullOr(TrialSummary),
  /** The best point's run over the whole range, as a backtest draws it; with walk-forward, the out-of-sample runs chained. */
  equity_curve: Schema.Array(EquityPointSchema),
  /** Why the search stopped: every trial ran, or the time budget ran out. */
  stopped: Schema.Literal("trials", "time"),
  folds: Schema.Array(Fold),
  /** Walk-forward: the chained out-of-sample return, and the folds' mean objective out of sample beside in sample (the gap is the overfitting). */
  walk_forward: Schema.NullOr(Schema.Struct({
    out_of_sample_return_percent: Schema.Number,
    out_of_sample_objective_mean: Schema.NullOr(Schema.Number),
    in_sample_objective_mean: Schema.NullOr(Schema.Number)
  }))
})
export type OptimizationResult = typeof OptimizationResult.Type

/** One optimisation: its request, where the job is, the trials run, and once it has finished its result. */
export class Optimization extends Schema.Class<Optimization>("Optimization")({
  id: OptimizationId,
  program_id: Schema.NullOr(ProgramId),
  status: JobStatus,
  request: OptimizationRequest,
  /**
   * Trials of every fold and the runs after their searches, as counted when the search starts; once
   * it ends, those it planned (fewer when the time ran out, or when a search found no best point).
   */
  trials_total: Schema.Int,
  trials_done: Schema.Int,
  /** The best trial so far (of the fold searched now, with walk-forward). */
  best: Schema.NullOr(TrialSummary),
  progress: Schema.Number,
  attempts: Schema.Int,
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(OptimizationResult),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}) {}

export class OptimizationList extends Schema.Class<OptimizationList>("OptimizationList")({
  optimizations: Schema.Array(Optimization)
}) {}

/** What a trial is for: a point of the search, a fold's best run out of sample, or the best point over the whole range. */
export const TrialRole = Schema.Literal("search", "out_of_sample", "best")
export type TrialRole = typeof TrialRole.Type

/** The metrics a trial list shows (and sorts by); `total_return` is the backtest's `total_pnl_percent`. */
export const TrialMetrics = Schema.Struct({
  sharpe: Schema.Number,
  sortino: Schema.NullOr(Schema.Number),
  calmar: Schema.NullOr(Schema.Number),
  total_return: Schema.Number,
  profit_factor: Schema.NullOr(Schema.Number),
  max_drawdown_percent: Schema.Number,
  total_trades: Schema.Int,
  win_rate: Schema.Number
})

/** One trial of an optimisation. */
export class OptimizationTrial extends Schema.Class<OptimizationTrial>("OptimizationTrial")({
  trial: Schema.Int,
  /** The walk-forward fold (0 without walk-forward). */
  fold: Schema.Int,
  role: TrialRole,
  status: JobStatus,
  params: ProgramParams,
  start: Schema.String,
  end: Schema.String,
  objective: Schema.NullOr(Schema.Number),
  /** Which constraint it broke, when it broke one. */
  rejected: Schema.NullOr(Schema.String),
  /** Null until it has completed. */
  metrics: Schema.NullOr(TrialMetrics),
  error: Schema.NullOr(Schema.String)
}) {}

/** What trials may be sorted by: the objective, a metric, or their order. */
export const TrialSort = Schema.Literal(
  "trial",
  "objective",
  "sharpe",
  "sortino",
  "calmar",
  "total_return",
  "profit_factor",
  "max_drawdown_percent",
  "total_trades",
  "win_rate"
)
export type TrialSort = typeof TrialSort.Type

export const TrialsParams = Schema.Struct({
  sort: defaultedParam(TrialSort, "trial"),
  order: defaultedParam(Schema.Literal("asc", "desc"), "asc"),
  role: Schema.optional(TrialRole),
  ...Pagination.fields
}).annotations({ parseOptions: { errors: "all" } })
export type TrialsParams = typeof TrialsParams.Type

export class OptimizationTrials extends Schema.Class<OptimizationTrials>("OptimizationTrials")({
  trials: Schema.Array(OptimizationTrial),
  /** Trials matching the filter, on all pages. */
  total: Schema.Int
}) {}

/** The data of a progress event (SSE and the WebSocket's `optimization:{id}` channel). */
export const OptimizationProgress = Schema.Struct({
  id: OptimizationId,
  status: JobStatus,
  trials_done: Schema.Int,
  trials_total: Schema.Int,
  best: Schema.NullOr(TrialSummary),
  error: Schema.NullOr(Schema.String)
})
export type OptimizationProgress = typeof OptimizationProgress.Type

/** The blocks cross-validation cuts the periods into when the request leaves it out: the paper's S = 16. */
export const defaultPartitions = 16

/** `POST /api/programs/{id}/optimizations/{optimization_id}/robustness`; every field has its default. */
export const OptimizationRobustnessRequest = Schema.Struct({
  monte_carlo: Schema.optionalWith(MonteCarloRequest, { nullable: true, exact: true }),
  /** S, even: the blocks cross-validation cuts the search trials' periods into (C(S, S/2) combinations). */
  partitions: defaulted(
    Schema.Int.pipe(Schema.between(2, 16), Schema.filter((s) => s % 2 === 0 || "must be even")),
    defaultPartitions
  )
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{}, { monte_carlo: { runs: 5000, seed: 7, method: "resample" }, partitions: 8 }]
})
export type OptimizationRobustnessRequest = typeof OptimizationRobustnessRequest.Type

/** The probability of backtest overfitting by combinatorially symmetric cross-validation, with what it read. */
export const OverfittingSchema = Schema.Struct({
  partitions: Schema.Int,
  /** T: the returns between the points of the trials' curves, less the remainder by `partitions` (the earliest). */
  periods: Schema.Int,
  /** N: the search trials with a curve. */
  trials: Schema.Int,
  /** C(S, S/2): the ways to take half the blocks in sample. */
  combinations: Schema.Int,
  /** The share of combinations whose best trial in sample is in the lower half out of sample. */
  probability_of_overfitting: Schema.Number,
  /** λ = ln(ω̄ / (1 − ω̄)), ω̄ the in-sample best's relative rank out of sample, across the combinations. */
  logits: PercentilesSchema,
  /** The in-sample best's Sharpe ratio out of sample against in sample, across the combinations. */
  degradation: Schema.Struct({
    /** Of the least-squares line; null when the in-sample figures do not vary. */
    slope: Schema.NullOr(Schema.Number),
    intercept: Schema.NullOr(Schema.Number),
    /** The share of combinations whose in-sample best has a Sharpe ratio below 0 out of sample. */
    probability_of_loss: Schema.Number
  })
})

/** The objective along one searched parameter, the others held at the best point's. */
export const SensitivitySchema = Schema.Struct({
  parameter: Schema.String,
  /** The best point and its neighbours along the parameter, in its order; null objectives broke a constraint. */
  values: Schema.Array(Schema.Struct({
    value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean),
    objective: Schema.NullOr(Schema.Number)
  })),
  /** The largest fall of the objective at a nearest neighbour, in percent of the best's; null without one. */
  change_percent: Schema.NullOr(Schema.Number)
})

/** The robustness of a completed optimisation's best point, and of the search that chose it. */
export class OptimizationRobustnessReport
  extends Schema.Class<OptimizationRobustnessReport>("OptimizationRobustnessReport")({
    optimization_id: OptimizationId,
    /** The fold whose search chose the best point: 0, or the last with walk-forward. */
    fold: Schema.Int,
    /** On the best point's run over the whole range (out of sample with walk-forward); null when it has none. */
    monte_carlo: Schema.NullOr(MonteCarloFiguresSchema),
    /** Of the best search trial's curve, given the search trials with a curve and their Sharpe ratios' variance. */
    deflated_sharpe: Schema.NullOr(DeflatedSharpeSchema),
    /** Null with fewer than 2 search trials with a curve, or fewer periods than 2 per partition in sample. */
    overfitting: Schema.NullOr(OverfittingSchema),
    sensitivity: Schema.Array(SensitivitySchema)
  })
{}
