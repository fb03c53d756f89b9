import { Cache, Duration, Effect, Exit, Layer, Option, RcMap } from "effect"
import { alignBars } from "../backtests/AlignedBars.js"
import { failForGood, runTerms } from "../backtests/BacktestWorkers.js"
import { packBars } from "../backtests/PackedBars.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { JobFailed, type JobLease, runJobWorkers } from "../jobs/JobWorkers.js"
import { keptWarm } from "../jobs/WorkerThread.js"
import { MarketData } from "../market/MarketData.js"
import { type Candle, timeframeMillis } from "../venues/Venue.js"
import { scoreOf } from "./Objective.js"
import type { OptimizationId } from "./Optimization.js"
import { type OptimizationRow, OptimizationsRepo, trialJobs, type TrialRow } from "./OptimizationsRepo.js"
import { startTrialThread } from "./TrialThread.js"

/**
 * The wake-up kind a coordinator waits on: a trial worker has run out of trials, so some search may
 * need more planned or has ended. Not one per trial: a coordinator counts the trials ended meanwhile
 * at its polls; woken at each trial's end, it cost a notification and a count of all the search's
 * trials per trial (on PGlite 1.9 ms, beside the 3.1 ms of the trial's own claim and completion).
 */
export const trialsRanOut = "optimization_trials_ran_out"

/** Bars read from the candle store in one call while loading an optimisation's data. */
const barsPerRead = 50_000

/** Every run gets the same seed, as backtests do, so a trial repeats its backtest exactly. */
const seed = 1

/**
 * The trial workers of this instance (see `runJobWorkers`): they claim the trials of any
 * optimisation, from any replica's coordinator. What makes a trial cheap is kept warm per
 * optimisation: its data (the candles of its whole range with the warm-up before it, read once
 * per instance, and each symbol's terms) and its threads (each with the program runtime loaded
 * and the bars in memory, one per worker running its trials), kept a minute after their last trial.
 */
export const TrialWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options, sandbox, venues } = yield* PlatformConfig
    const repo = yield* OptimizationsRepo
    const market = yield* MarketData
    const wakeup = yield* JobWakeup

    const loadRow = (row: OptimizationRow) => {
      const r = row.request
      return Effect.gen(function*() {
        const symbols = r.symbols ?? [r.symbol!]
        const step = timeframeMillis[r.timeframe]
        const from = Math.ceil(Date.parse(r.start) / step) * step - r.warmup_bars! * step
        const to = Date.parse(r.end)
        const source = yield* market.source({ id: row.user_id }, r.exchange!)
        const candles = yield* Effect.forEach(symbols, (symbol) =>
          Effect.gen(function*() {
            const all: Array<Candle> = []
            for (let start = from; start < to; start += barsPerRead * step) {
              const end = Math.min(to, start + barsPerRead * step)
              for (const candle of yield* market.candles(source, { symbol, timeframe: r.timeframe, start, end })) {
                all.push(candle)
              }
            }
            return all
          }))
        const bars = alignBars(candles, symbols.map(() => undefined))
        if (bars === undefined || bars[0]!.length === 0) {
          return yield* new JobFailed({ message: `No ${r.timeframe} candles of ${symbols.join(", ")} in the range` })
        }
        const terms = yield* runTerms(market, venues, {
          ...r,
          symbols,
          initial_balance: r.initial_balance!,
          fee_rate: r.fee_rate!,
          maker_fee_rate: r.maker_fee_rate!,
          slippage: r.slippage!,
          slippage_model: r.slippage_model!,
          fill_timing: r.fill_timing!,
          margin_mode: r.margin_mode!,
          leverage: r.leverage!,
          start_at: r.start,
          end_at: r.end
        }, source)
        return {
          request: r,
          thread: {
            run: { code: row.code, symbols, timeframe: r.timeframe, timeframes: r.timeframes ?? [], seed },
            ...terms,
            limits: sandbox,
            bars: packBars(bars)
          }
        }
      }).pipe(failForGood({ start_at: r.start, exchange: r.exchange! }))
    }

    const load = (id: OptimizationId) =>
      Effect.flatMap(
        repo.findById(id),
        Option.match({
          onNone: () => new JobFailed({ message: `Optimization ${id} was deleted` }),
          onSome: loadRow
        })
      )

    // A failed load is not kept: the next trial tries again.
    const data = yield* Cache.makeWith({
      capacity: 8,
      lookup: load,
      timeToLive: (exit) => Exit.isSuccess(exit) ? Duration.minutes(2) : Duration.zero
    })
    // A pool of threads per optimisation, closed a minute after its last trial and when the instance
    // stops. Not effect's KeyedPool: in 3.22 it never closes its pools, so their threads' TTL fibers
    // outlived the instance, and their timers kept the process from exiting.
    const threads = yield* RcMap.make({
      lookup: (id: OptimizationId) =>
        keptWarm(Effect.flatMap(data.get(id), (d) => startTrialThread(d.thread)), Math.max(1, options.concurrency)),
      idleTimeToLive: Duration.minutes(1)
    })

    // `concurrency` trials run on threads at once, but twice as many workers claim them: each trial
    // waits claimed for a thread while another runs, so a thread goes from one trial to the next
    // without waiting for the main thread to store the last one, wake its coordinator and claim.
    const running = yield* Effect.makeSemaphore(Math.max(1, options.concurrency))

    const run = (row: TrialRow, lease: JobLease) =>
      Effect.gen(function*() {
        const { request } = yield* data.get(row.optimization_id)
        const borrow = yield* RcMap.get(threads, row.optimization_id)
        const outcome = yield* lease.keepAlive(
          running.withPermits(1)(Effect.scoped(Effect.flatMap(
            borrow,
            (thread) =>
              thread.run({
                params: row.params,
                start: Date.parse(row.start_at),
                end: Date.parse(row.end_at),
                warmup: request.warmup_bars!,
                full: row.role !== "search"
              })
          )))
        ).pipe(failForGood({ start_at: row.start_at, exchange: request.exchange! }))
        return { outcome, ...scoreOf(outcome.metrics, request.objective!, request.constraints!) }
      }).pipe(
        withRequestSpan("TrialWorkers.run", { attributes: { optimizationId: row.optimization_id, trial: row.trial } })
      )

    yield* runJobWorkers({
      kind: trialJobs.table,
      queue: repo.trials,
      options: { ...options, concurrency: 2 * options.concurrency },
      run,
      drained: wakeup.wake(trialsRanOut)
    })
  })
)
