import { Clock, Duration, Effect, Either, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { JobFailed, type JobLease, JobStopped, runJobWorkers } from "../jobs/JobWorkers.js"
import { now } from "../time/Now.js"
import { timeframeMillis } from "../venues/Venue.js"
import { scoreOf } from "./Objective.js"
import type { Fold, OptimizationResult, TrialRole, TrialSummary } from "./Optimization.js"
import { searchTrials, summaryOf } from "./Optimizations.js"
import { optimizationJobs, type OptimizationRow, OptimizationsRepo, trialJobs } from "./OptimizationsRepo.js"
import { type Point, propose } from "./Search.js"
import { trialsRanOut } from "./TrialWorkers.js"
import { foldsOf, type FoldWindows, stitch, type Window } from "./WalkForward.js"

/**
 * Trials queued at once by one search: enough to keep every worker of a few replicas busy, few
 * enough that claims stay cheap and a cancelled or timed-out search leaves little to cancel.
 */
const queuedAtOnce = 64

const mean = (xs: ReadonlyArray<number>) => xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * The coordinators of this instance: each runs one optimisation job, planning its trials (which
 * the trial workers of every replica run), waiting for them, and writing the result. Everything
 * it knows is in the trial rows, so a coordinator that takes over a dead one's job goes on from
 * where the rows are: finished trials are kept, and planned ones are not planned again.
 */
export const OptimizationWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options } = yield* PlatformConfig
    const repo = yield* OptimizationsRepo
    const wakeup = yield* JobWakeup
    // A model-based search learns from finished trials: it keeps only as many running as there are workers to run them.
    const modelBatch = Math.max(2, options.concurrency)

    const run = (row: OptimizationRow, lease: JobLease) =>
      Effect.gen(function*() {
        const r = row.request
        const step = timeframeMillis[r.timeframe]
        const folds = Either.getOrThrow(
          foldsOf(Date.parse(r.start), Date.parse(r.end), step, r.walk_forward ?? undefined)
        )
        const perSearch = searchTrials({ search: r.search, budget: { trials: r.budget!.trials! } }, row.space)
        const deadline = Date.parse(row.started_at!) + r.budget!.seconds! * 1000
        let stopped: "trials" | "time" = "trials"

        // Reads count a running optimisation's progress from its trials, so a step writes it only
        // with the lease's renewal, once a third of the lease has passed: not a statement per trial.
        const renewEvery = Duration.toMillis(options.lease) / 3
        let renewed = yield* Clock.currentTimeMillis
        /** The trials' counts (see `OptimizationsRepo.counts`); stops when the run is no longer ours. */
        const count = (fold: number) =>
          Effect.gen(function*() {
            const counts = yield* repo.counts({ id: row.id, fold, attempts: row.attempts })
            if (!counts.ours) return yield* new JobStopped()
            const at = yield* Clock.currentTimeMillis
            if (at - renewed >= renewEvery) {
              yield* lease.checkpoint(Math.min(1, counts.done / row.trials_total))
              renewed = at
            }
            return counts
          })
        // Rests until trial workers somewhere run out of trials, or a short poll (see `trialsRanOut`).
        const rest = lease.keepAlive(wakeup.idle(trialsRanOut, "250 millis"))

        const plan = (fold: number, role: TrialRole, trial: number, params: Record<string, unknown>, window: Window) =>
          Effect.gen(function*() {
            yield* repo.plan(row, yield* now, [{
              trial,
              fold,
              role,
              params,
              start_at: new Date(window.start),
              end_at: new Date(window.end)
            }])
            yield* wakeup.wake(trialJobs.table)
          })

        /** A fold's search to its end: every trial run (or cancelled when the time ran out); its best trial. */
        const search = (fold: FoldWindows) =>
          Effect.gen(function*() {
            for (;;) {
              const counts = yield* count(fold.fold)
              const unfinished = counts.planned - counts.finished
              if (stopped === "trials" && (yield* Clock.currentTimeMillis) >= deadline) {
                stopped = "time"
                yield* repo.cancelQueued(row.id, yield* now)
                continue
              }
              // A model-based search plans as trials end, to learn from each; the others refill their
              // queue once half of it has run: a statement (and a wake-up) per half queue, not per trial.
              const room = r.search === "tpe"
                ? modelBatch - unfinished
                : unfinished <= queuedAtOnce / 2
                ? queuedAtOnce - unfinished
                : 0
              if (stopped === "trials" && counts.planned < perSearch && room > 0) {
                const observations = r.search === "tpe"
                  ? (yield* repo.observations({ id: row.id, fold: fold.fold })).map((o) => ({
                    // The params as the search proposed them, besides the fixed ones: JSON scalars.
                    point: o.params as Point,
                    objective: o.objective
                  }))
                  : []
                const points = propose(r.search, row.space, {
                  seed: r.seed!,
                  from: counts.planned,
                  count: Math.min(room, perSearch - counts.planned),
                  observations
                })
                yield* repo.plan(
                  row,
                  yield* now,
                  points.map((point, i) => ({
                    trial: counts.planned + i,
                    fold: fold.fold,
                    role: "search" as const,
                    params: { ...row.params, ...point },
                    start_at: new Date(fold.inSample.start),
                    end_at: new Date(fold.inSample.end)
                  }))
                )
                yield* wakeup.wake(trialJobs.table)
                continue
              }
              if (unfinished === 0 && (counts.planned >= perSearch || stopped === "time")) {
                if (counts.failed > 0 && counts.failed === counts.finished) {
                  const error = yield* repo.firstError(row.id, fold.fold)
                  return yield* new JobFailed({ message: `Every trial failed; the first: ${error}` })
                }
                return Option.getOrNull(yield* repo.bestOf({ id: row.id, fold: fold.fold, role: "search" }))
              }
              yield* rest
            }
          })

        const bests: Array<TrialSummary | null> = []
        for (const fold of folds) {
          const best = yield* search(fold)
          bests.push(best === null ? null : summaryOf(best))
          // Out of sample, the fold's best point runs while the next fold searches.
          if (best !== null && fold.outOfSample !== null) {
            yield* plan(fold.fold, "out_of_sample", 0, best.params, fold.outOfSample)
          }
        }
        const whole = { start: Date.parse(r.start), end: Date.parse(r.end) }
        if (r.walk_forward == null && bests[0] !== null) yield* plan(0, "best", 0, bests[0]!.params, whole)
        while ((yield* count(folds.at(-1)!.fold)).runs_unfinished > 0) yield* rest
        yield* repo.settleTotal(row.id)

        const runOf = (fold: number, role: TrialRole) =>
          Effect.map(repo.bestOf({ id: row.id, fold, role }), Option.getOrNull)
        if (r.walk_forward == null) {
          const best = yield* runOf(0, "best")
          const result: OptimizationResult = {
            best: bests[0]!,
            equity_curve: best?.result?.outcome.equity_curve ?? [],
            stopped,
            folds: [],
            walk_forward: null
          }
          return result
        }
        const outRuns = yield* Effect.forEach(folds, (fold) => runOf(fold.fold, "out_of_sample"))
        const foldResults: Array<Fold> = folds.map((fold, i) => {
          const outcome = outRuns[i]?.result?.outcome ?? null
          return {
            fold: fold.fold,
            in_sample: {
              start: new Date(fold.inSample.start).toISOString(),
              end: new Date(fold.inSample.end).toISOString()
            },
            out_of_sample: {
              start: new Date(fold.outOfSample!.start).toISOString(),
              end: new Date(fold.outOfSample!.end).toISOString()
            },
            best: bests[i]!,
            out_of_sample_objective: outcome === null
              ? null
              : scoreOf(outcome.metrics, r.objective!, {}).objective,
            out_of_sample_metrics: outcome?.metrics ?? null
          }
        })
        const chained = stitch(
          outRuns.map((run) => run?.result?.outcome.equity_curve ?? []),
          r.initial_balance!
        )
        const result: OptimizationResult = {
          best: bests.at(-1) ?? null,
          equity_curve: chained.equity_curve,
          stopped,
          folds: foldResults,
          walk_forward: {
            out_of_sample_return_percent: chained.return_percent,
            out_of_sample_objective_mean: mean(
              foldResults.flatMap((f) => f.out_of_sample_objective === null ? [] : [f.out_of_sample_objective])
            ),
            in_sample_objective_mean: mean(
              foldResults.flatMap((f) => f.best?.objective == null ? [] : [f.best.objective])
            )
          }
        }
        return result
      }).pipe(withRequestSpan("OptimizationWorkers.run", { attributes: { optimizationId: row.id } }))

    yield* runJobWorkers({ kind: optimizationJobs.table, queue: repo.jobs, options, run })
  })
)
