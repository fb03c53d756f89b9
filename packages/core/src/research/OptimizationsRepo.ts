import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { BacktestMetricsSchema, BacktestOutcome } from "../backtests/Backtest.js"
import { makeJobQueue } from "../jobs/JobQueue.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { OptimizationId, OptimizationRequest, OptimizationResult, TrialRole, type TrialSort } from "./Optimization.js"

const Choice = Schema.Union(Schema.String, Schema.Finite, Schema.Boolean)

/** The searched dimensions as stored: what `searchSpace` resolved from the request and the declaration. */
export const StoredSpace = Schema.Array(Schema.Union(
  Schema.Struct({
    name: Schema.String,
    kind: Schema.Literal("int"),
    min: Schema.Number,
    max: Schema.Number,
    step: Schema.optionalWith(Schema.Number, { exact: true })
  }),
  Schema.Struct({
    name: Schema.String,
    kind: Schema.Literal("float"),
    min: Schema.Number,
    max: Schema.Number,
    steps: Schema.optionalWith(Schema.Number, { exact: true })
  }),
  Schema.Struct({ name: Schema.String, kind: Schema.Literal("choice"), choices: Schema.Array(Choice) })
))

export const OptimizationRow = Schema.Struct({
  id: OptimizationId,
  user_id: UserId,
  program_id: Schema.NullOr(ProgramId),
  code: Schema.String,
  request: Schema.parseJson(OptimizationRequest),
  space: Schema.parseJson(StoredSpace),
  /** The parameters not searched, resolved against the declaration. */
  params: Schema.parseJson(ProgramParams),
  trials_total: Schema.Int,
  status: JobStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(OptimizationResult)),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type OptimizationRow = typeof OptimizationRow.Type

// Not the job's code (a program's source), its search space, fixed parameters or lease: no answer shows them.
const OptimizationViewRow = OptimizationRow.omit("code", "space", "params", "lease_until", "claimed_by")
const FinishedRow = OptimizationRow.pick("user_id", "program_id", "status", "request", "space", "result")

/**
 * An optimisation as the answers show it: its row, its finished trials and, while it has no
 * result, its best search trial so far (of the latest fold searched), read in the same statement.
 */
export const OptimizationView = Schema.Struct({
  ...OptimizationViewRow.fields,
  trials_done: Schema.Int,
  best_trial: Schema.NullOr(Schema.Int),
  best_params: Schema.NullOr(Schema.parseJson(ProgramParams)),
  best_objective: Schema.NullOr(Schema.Number),
  best_metrics: Schema.NullOr(Schema.parseJson(BacktestMetricsSchema))
})
export type OptimizationView = typeof OptimizationView.Type

/** What a trial stores: its run (the curve, trades and fills only for a full run) and its score. */
export const TrialResult = Schema.Struct({
  outcome: BacktestOutcome,
  objective: Schema.NullOr(Schema.Number),
  rejected: Schema.NullOr(Schema.String)
})
export type TrialResult = typeof TrialResult.Type

const Metric = Schema.NullOr(Schema.Number)

export const TrialRow = Schema.Struct({
  id: Schema.Int,
  user_id: UserId,
  optimization_id: OptimizationId,
  trial: Schema.Int,
  fold: Schema.Int,
  role: TrialRole,
  params: Schema.parseJson(ProgramParams),
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  status: JobStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(TrialResult)),
  objective: Metric,
  rejected: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type TrialRow = typeof TrialRow.Type

/** A trial as lists read it: its summary columns, not its result. */
export const TrialEntryRow = Schema.Struct({
  trial: Schema.Int,
  fold: Schema.Int,
  role: TrialRole,
  status: JobStatus,
  params: Schema.parseJson(ProgramParams),
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  objective: Metric,
  rejected: Schema.NullOr(Schema.String),
  sharpe: Metric,
  sortino: Metric,
  calmar: Metric,
  total_return: Metric,
  profit_factor: Metric,
  max_drawdown_percent: Metric,
  total_trades: Schema.NullOr(Schema.Int),
  win_rate: Metric,
  error: Schema.NullOr(Schema.String)
})
export type TrialEntryRow = typeof TrialEntryRow.Type

export const optimizationJobs = { table: "optimizations", Row: OptimizationRow, Result: OptimizationResult }

const encodeMetrics = Schema.encodeSync(Schema.parseJson(BacktestMetricsSchema))

/** Trials as jobs: the metrics copied to columns, so lists sort by them in SQL, and whole, so a best trial's read without its result. */
export const trialJobs = {
  table: "optimization_trials",
  Row: TrialRow,
  Result: TrialResult,
  summary: ({ objective, outcome: { metrics }, rejected }: TrialResult) => ({
    objective,
    rejected,
    metrics: encodeMetrics(metrics),
    sharpe: metrics.sharpe,
    sortino: metrics.sortino,
    calmar: metrics.calmar,
    total_return: metrics.total_pnl_percent,
    profit_factor: metrics.profit_factor,
    max_drawdown_percent: metrics.max_drawdown_percent,
    total_trades: metrics.total_trades,
    win_rate: metrics.win_rate
  })
}

const NewOptimization = Schema.Struct({
  user_id: UserId,
  program_id: ProgramId,
  code: Schema.String,
  request: Schema.parseJson(OptimizationRequest),
  space: Schema.parseJson(StoredSpace),
  params: Schema.parseJson(ProgramParams),
  trials_total: Schema.Int,
  now: Schema.DateFromSelf
})

/** A trial the coordinator plans. */
export const NewTrial = Schema.Struct({
  trial: Schema.Int,
  fold: Schema.Int,
  role: TrialRole,
  params: Schema.parseJson(ProgramParams),
  start_at: Schema.DateFromSelf,
  end_at: Schema.DateFromSelf
})
export type NewTrial = typeof NewTrial.Type

const encodeTrial = Schema.encode(NewTrial)

/** Where one fold's search stands: trials planned, finished (in any final status) and failed. */
const TrialCounts = Schema.Struct({
  planned: Schema.Int,
  finished: Schema.Int,
  failed: Schema.Int,
  done: Schema.Int,
  runs_unfinished: Schema.Int,
  /** Whether the optimisation is still running under the coordinator's attempt (not cancelled, deleted or taken over). */
  ours: Schema.Boolean
})

const Observation = Schema.Struct({
  trial: Schema.Int,
  params: Schema.parseJson(ProgramParams),
  objective: Metric
})

/** SQL for optimisations and their trials; `jobs` and `trials` claim, renew and end them. */
export class OptimizationsRepo extends Effect.Service<OptimizationsRepo>()("@trading-platform/core/OptimizationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const final = sql`status IN ('completed', 'failed', 'cancelled')`

    const insert = SqlSchema.single({
      Request: NewOptimization,
      Result: OptimizationRow,
      execute: (o) =>
        sql`
        INSERT INTO optimizations (user_id, program_id, code, request, space, params, trials_total, status, created_at)
        VALUES (${o.user_id}, ${o.program_id}, ${o.code}, ${o.request}, ${o.space}, ${o.params}, ${o.trials_total},
          'queued', ${o.now})
        RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: OptimizationId,
      Result: OptimizationRow,
      execute: (id) => sql`SELECT * FROM optimizations WHERE id = ${id}`
    })

    /** `OptimizationView`s of the optimisations `where` selects: one statement however many. */
    const views = (where: Fragment) =>
      sql`SELECT ${columnsOf(sql, OptimizationViewRow, "o")},
          (SELECT count(*)::int FROM optimization_trials t WHERE t.optimization_id = o.id AND ${final}) AS trials_done,
          b.trial AS best_trial, b.params AS best_params, b.objective AS best_objective,
          b.metrics AS best_metrics
        FROM optimizations o
        LEFT JOIN LATERAL (
          SELECT trial, params, objective, metrics FROM optimization_trials t
          WHERE o.result IS NULL AND t.optimization_id = o.id AND t.role = 'search' AND t.status = 'completed'
            AND t.objective IS NOT NULL
            AND t.fold = (SELECT max(fold) FROM optimization_trials f WHERE f.optimization_id = o.id AND f.role = 'search')
          ORDER BY t.objective DESC, t.trial LIMIT 1
        ) b ON true
        WHERE ${where}`

    const view = SqlSchema.findOne({
      Request: OptimizationId,
      Result: OptimizationView,
      execute: (id) => views(sql`o.id = ${id}`)
    })

    // What a robustness report reads of a finished optimisation: not its code or fixed parameters.
    const findFinished = SqlSchema.findOne({
      Request: OptimizationId,
      Result: FinishedRow,
      execute: (id) => sql`SELECT ${columnsOf(sql, FinishedRow)} FROM optimizations WHERE id = ${id}`
    })

    // Whose it is and of which program, for the requests that only check that (a page of trials, a
    // cancel, a delete): the view decodes the result and counts the trials.
    const owner = SqlSchema.findOne({
      Request: OptimizationId,
      Result: Schema.Struct({ user_id: UserId, program_id: Schema.NullOr(ProgramId) }),
      execute: (id) => sql`SELECT user_id, program_id FROM optimizations WHERE id = ${id}`
    })

    const ofProgram = SqlSchema.findAll({
      Request: Schema.Struct({ program_id: ProgramId, limit: Schema.Int, offset: Schema.Int }),
      Result: OptimizationView,
      execute: (q) =>
        sql`${views(sql`o.program_id = ${q.program_id}`)}
          ORDER BY o.created_at DESC, o.id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    const remove = (id: OptimizationId) => sql`DELETE FROM optimizations WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Plans trials; those planned before (by a coordinator that died) stay as they are. */
    const plan = (
      optimization: { readonly id: OptimizationId; readonly user_id: number },
      at: Date,
      trials: ReadonlyArray<NewTrial>
    ) =>
      trials.length === 0 ?
        Effect.void :
        Effect.flatMap(Effect.forEach(trials, (t) => encodeTrial(t)), (encoded) =>
          sql`INSERT INTO optimization_trials ${
            sql.insert(encoded.map((t) => ({
              ...t,
              user_id: optimization.user_id,
              optimization_id: optimization.id,
              status: "queued",
              created_at: at
            })))
          } ON CONFLICT (optimization_id, fold, role, trial) DO NOTHING`).pipe(Effect.asVoid)

    /**
     * Where the optimisation's trials are, in one statement (a coordinator's step): of a fold's
     * search trials, how many are planned, finished and failed; how many trials of every fold and
     * role have finished; how many runs of the other roles are unfinished; and whether the run of
     * `attempts` still holds the optimisation.
     */
    const counts = SqlSchema.single({
      Request: Schema.Struct({ id: OptimizationId, fold: Schema.Int, attempts: Schema.Int }),
      Result: TrialCounts,
      execute: (q) => {
        const search = sql`fold = ${q.fold} AND role = 'search'`
        return sql`SELECT (count(*) FILTER (WHERE ${search}))::int AS planned,
          (count(*) FILTER (WHERE ${search} AND ${final}))::int AS finished,
          (count(*) FILTER (WHERE ${search} AND status = 'failed'))::int AS failed,
          (count(*) FILTER (WHERE ${final}))::int AS done,
          (count(*) FILTER (WHERE role <> 'search' AND NOT ${final}))::int AS runs_unfinished,
          EXISTS (SELECT 1 FROM optimizations
            WHERE id = ${q.id} AND attempts = ${q.attempts} AND status = 'running') AS ours
          FROM optimization_trials WHERE optimization_id = ${q.id}`
      }
    })

    /** The finished search trials of a fold, in order: what a model-based search learns from. */
    const observations = SqlSchema.findAll({
      Request: Schema.Struct({ id: OptimizationId, fold: Schema.Int }),
      Result: Observation,
      execute: (q) =>
        sql`SELECT trial, params, objective FROM optimization_trials
          WHERE optimization_id = ${q.id} AND fold = ${q.fold} AND role = 'search' AND ${final} ORDER BY trial`
    })

    /** A fold's best search trial (the earliest of equals), or its one run of another role. */
    const bestOf = SqlSchema.findOne({
      Request: Schema.Struct({ id: OptimizationId, fold: Schema.Int, role: TrialRole }),
      Result: TrialRow,
      execute: (q) =>
        sql`SELECT * FROM optimization_trials
          WHERE optimization_id = ${q.id} AND fold = ${q.fold} AND role = ${q.role} AND status = 'completed'
            AND (objective IS NOT NULL OR role <> 'search')
          ORDER BY objective DESC NULLS LAST, trial LIMIT 1`
    })

    /** The first error of a fold's failed search trials: why a search none of whose trials ran failed. */
    const firstError = (id: OptimizationId, fold: number) =>
      Effect.map(
        sql<{ error: string | null }>`SELECT error FROM optimization_trials
          WHERE optimization_id = ${id} AND fold = ${fold} AND role = 'search' AND status = 'failed'
          ORDER BY trial LIMIT 1`,
        (rows) => rows[0]?.error ?? null
      )

    /** Cancels the optimisation's trials no worker has started (the time budget ran out, or it was cancelled). */
    const cancelQueued = (id: OptimizationId, at: Date) =>
      sql`UPDATE optimization_trials SET status = 'cancelled', finished_at = ${at}
        WHERE optimization_id = ${id} AND status = 'queued'`.pipe(Effect.asVoid)

    /**
     * Counts, as the optimisation's total, the trials it planned: fewer than first counted when the
     * time ran out or a search found no best point to run after it.
     */
    const settleTotal = (id: OptimizationId) =>
      sql`UPDATE optimizations SET trials_total = (SELECT count(*) FROM optimization_trials WHERE optimization_id = ${id})
        WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Cancels every unfinished trial: a running one's worker finds its writes miss and stops. */
    const cancelTrials = (id: OptimizationId, at: Date) =>
      sql`UPDATE optimization_trials SET status = 'cancelled', lease_until = NULL, finished_at = ${at}
        WHERE optimization_id = ${id} AND status IN ('queued', 'running')`.pipe(Effect.asVoid)

    const page = (
      id: OptimizationId,
      q: {
        readonly sort: TrialSort
        readonly order: "asc" | "desc"
        readonly role?: TrialRole | undefined
        readonly limit: number
        readonly offset: number
      }
    ) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`optimization_id = ${id}`,
          ...(q.role === undefined ? [] : [sql`role = ${q.role}`])
        ])
        const direction = q.order === "desc" ? sql`DESC` : sql`ASC`
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: TrialEntryRow,
          execute: () =>
            sql`SELECT trial, fold, role, status, params, start_at, end_at, objective, rejected, sharpe, sortino, calmar,
              total_return, profit_factor, max_drawdown_percent, total_trades, win_rate, error
              FROM optimization_trials WHERE ${where}
              ORDER BY ${sql(q.sort)} ${direction} NULLS LAST, fold, role, trial
              LIMIT ${q.limit} OFFSET ${q.offset}`
        })(undefined)
        const [count] = yield* sql<
          { count: number }
        >`SELECT count(*)::int AS count FROM optimization_trials WHERE ${where}`
        return { rows, total: count?.count ?? 0 }
      })

    return {
      insert,
      findById,
      findFinished,
      ofProgram,
      remove,
      plan,
      counts,
      observations,
      bestOf,
      firstError,
      cancelQueued,
      cancelTrials,
      settleTotal,
      view,
      owner,
      page,
      jobs: yield* makeJobQueue(optimizationJobs),
      trials: yield* makeJobQueue(trialJobs)
    } as const
  })
}) {}
