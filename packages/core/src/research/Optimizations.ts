import { Effect, Option, Schema } from "effect"
import { backtestDefaults } from "../backtests/Backtest.js"
import { Backtests } from "../backtests/Backtests.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { NotFound } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { watchJob } from "../jobs/JobProgress.js"
import { cancelUnfinished } from "../jobs/JobQueue.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import type { ProgramId } from "../programs/Program.js"
import { Programs } from "../programs/Programs.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import type { UserId } from "../users/User.js"
import { timeframeMillis } from "../venues/Venue.js"
import {
  Optimization,
  OptimizationId,
  OptimizationList,
  type OptimizationProgress,
  type OptimizationRequest,
  OptimizationTrial,
  OptimizationTrials,
  type TrialsParams,
  type TrialSummary
} from "./Optimization.js"
import { optimizationJobs, OptimizationsRepo, type OptimizationView, type TrialRow } from "./OptimizationsRepo.js"
import { gridSize, type Space } from "./Search.js"
import { searchSpace } from "./SearchSpace.js"
import { foldsOf } from "./WalkForward.js"

/** A finished trial as the answers summarise it. */
export const summaryOf = (row: TrialRow): TrialSummary => ({
  trial: row.trial,
  params: row.params,
  objective: row.objective,
  metrics: row.result!.outcome.metrics
})

/** Trials of one search: every grid point, or the budget. */
export const searchTrials = (
  request: { readonly search: OptimizationRequest["search"]; readonly budget: { readonly trials: number } },
  space: Space
) => request.search === "grid" ? gridSize(space) : request.budget.trials

/** Optimisations of programs as durable jobs: the rules of a request, ownership, reads, cancellation and deletion. */
export class Optimizations extends Effect.Service<Optimizations>()("@trading-platform/core/Optimizations", {
  effect: Effect.gen(function*() {
    const repo = yield* OptimizationsRepo
    const backtests = yield* Backtests
    const programs = yield* Programs
    const wakeup = yield* JobWakeup
    const { maxQueuedJobsPerUser } = yield* PlatformConfig

    /**
     * The caller's optimisation of the program in the path, as `read` gives it (the whole view, or only
     * its owner and program when that is all a request needs): 404 when it is of another program.
     */
    const ofProgram = <A extends { readonly user_id: UserId; readonly program_id: ProgramId | null }, E>(
      caller: CurrentUserShape,
      programId: ProgramId,
      id: OptimizationId,
      read: (id: OptimizationId) => Effect.Effect<Option.Option<A>, E>
    ) =>
      Effect.gen(function*() {
        yield* programs.check(caller, programId)
        const row = yield* read(id).pipe(ownedBy(caller, `Optimization ${id}`))
        if (row.program_id !== programId) {
          return yield* new NotFound({ error: `Optimization ${id} not found for program ${programId}` })
        }
        return row
      })

    const toOptimization = (row: OptimizationView) =>
      new Optimization({
        id: row.id,
        program_id: row.program_id,
        status: row.status,
        request: row.request,
        trials_total: row.trials_total,
        trials_done: row.trials_done,
        best: row.result?.best ?? (row.best_trial === null ? null : {
          trial: row.best_trial,
          params: row.best_params!,
          objective: row.best_objective,
          metrics: row.best_metrics!
        }),
        // Counted from the trials while it runs: the coordinator writes its own only as it steps.
        progress: row.status === "running" ? Math.min(1, row.trials_done / row.trials_total) : row.progress,
        attempts: row.attempts,
        error: row.error,
        result: row.result,
        created_at: row.created_at,
        started_at: row.started_at,
        finished_at: row.finished_at
      })

    /** The optimisation as it is now, after a write to it. */
    const current = (id: OptimizationId) => Effect.map(repo.view(id), (row) => toOptimization(Option.getOrThrow(row)))

    const submit = (caller: CurrentUserShape, programId: ProgramId, request: OptimizationRequest) =>
      Effect.gen(function*() {
        const input = {
          ...backtestDefaults,
          ...request,
          objective: request.objective ?? "sharpe",
          constraints: request.constraints ?? {},
          budget: { trials: 100, seconds: 3600, ...request.budget },
          seed: request.seed ?? 1
        }
        // The data and settings pass a backtest's rules; the fixed params its declaration.
        const { program, rows: [row] } = yield* backtests.prepare(caller, programId, [input])
        const space = yield* searchSpace(program.parameters, input.space)
        const trials = searchTrials(input, space)
        if (trials > input.budget.trials) {
          return yield* invalidField(
            "space",
            `has ${trials} grid points, above budget.trials (${input.budget.trials}): narrow it or raise the budget`
          )
        }
        const folds = yield* foldsOf(
          Date.parse(input.start),
          Date.parse(input.end),
          timeframeMillis[input.timeframe],
          input.walk_forward ?? undefined
        )
        const inserted = yield* repo.jobs.admit(
          caller.id,
          maxQueuedJobsPerUser,
          repo.insert({
            user_id: caller.id,
            program_id: programId,
            code: row!.code,
            request: input,
            space,
            params: row!.params,
            // Each fold's search, and each fold's out-of-sample run (or the best point's run over the whole range).
            trials_total: folds.length * (trials + 1),
            now: yield* now
          })
        )
        yield* wakeup.wake(optimizationJobs.table)
        return yield* current(inserted.id)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.submit", { attributes: { userId: caller.id, programId } })
      )

    const get = (caller: CurrentUserShape, programId: ProgramId, id: OptimizationId) =>
      Effect.map(ofProgram(caller, programId, id, repo.view), toOptimization).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.get", { attributes: { userId: caller.id, optimizationId: id } })
      )

    const list = (caller: CurrentUserShape, programId: ProgramId, page: Pagination) =>
      Effect.gen(function*() {
        yield* programs.check(caller, programId)
        const rows = yield* repo.ofProgram({ program_id: programId, ...pageOf(page) })
        return new OptimizationList({ optimizations: rows.map(toOptimization) })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.list", { attributes: { userId: caller.id, programId } })
      )

    const trials = (caller: CurrentUserShape, programId: ProgramId, id: OptimizationId, params: TrialsParams) =>
      Effect.gen(function*() {
        yield* ofProgram(caller, programId, id, repo.owner)
        const { rows, total } = yield* repo.page(id, {
          sort: params.sort ?? "trial",
          order: params.order ?? "asc",
          role: params.role,
          ...pageOf(params)
        })
        return new OptimizationTrials({
          total,
          trials: rows.map((row) =>
            new OptimizationTrial({
              trial: row.trial,
              fold: row.fold,
              role: row.role,
              status: row.status,
              params: row.params,
              start: row.start_at,
              end: row.end_at,
              objective: row.objective,
              rejected: row.rejected,
              metrics: row.status !== "completed" ? null : {
                sharpe: row.sharpe!,
                sortino: row.sortino,
                calmar: row.calmar,
                total_return: row.total_return!,
                profit_factor: row.profit_factor,
                max_drawdown_percent: row.max_drawdown_percent!,
                total_trades: row.total_trades!,
                win_rate: row.win_rate!
              },
              error: row.error
            })
          )
        })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.trials", { attributes: { userId: caller.id, optimizationId: id } })
      )

    const cancel = (caller: CurrentUserShape, programId: ProgramId, id: OptimizationId) =>
      Effect.gen(function*() {
        yield* ofProgram(caller, programId, id, repo.owner)
        const at = yield* now
        yield* cancelUnfinished(repo.jobs, id, `Optimization ${id}`, at, Schema.Struct({ id: OptimizationId }))
        yield* repo.cancelTrials(id, at)
        return yield* current(id)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.cancel", { attributes: { userId: caller.id, optimizationId: id } })
      )

    /** Deletes it with its trials; a running one's coordinator and trial workers find their writes miss and stop. */
    const remove = (caller: CurrentUserShape, programId: ProgramId, id: OptimizationId) =>
      Effect.flatMap(ofProgram(caller, programId, id, repo.owner), () => repo.remove(id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Optimizations.remove", { attributes: { userId: caller.id, optimizationId: id } })
      )

    const progressOf = (caller: CurrentUserShape, id: OptimizationId) =>
      Effect.map(repo.view(id).pipe(ownedBy(caller, `Optimization ${id}`)), toOptimization).pipe(
        Effect.map((o): OptimizationProgress => ({
          id: o.id,
          status: o.status,
          trials_done: o.trials_done,
          trials_total: o.trials_total,
          best: o.best,
          error: o.error
        })),
        dieOnStorageFailure
      )

    /**
     * The optimisation's progress each time trials finish or the best changes, ending with its
     * final status: the SSE stream and the WebSocket's `optimization:{id}` channel. Fails at once
     * (404, 403) when it is unknown or another user's (or, given `programId`, of another program).
     */
    const watch = (caller: CurrentUserShape, id: OptimizationId, programId?: ProgramId) =>
      Effect.zipRight(
        programId === undefined ? Effect.void : ofProgram(caller, programId, id, repo.owner).pipe(dieOnStorageFailure),
        watchJob(
          progressOf(caller, id),
          (a, b) => a.status === b.status && a.trials_done === b.trials_done && a.best?.trial === b.best?.trial
        )
      ).pipe(withRequestSpan("Optimizations.watch", { attributes: { userId: caller.id, optimizationId: id } }))

    return { ofProgram, submit, get, list, trials, cancel, remove, watch } as const
  })
}) {}
