import { Effect, Fiber, Layer } from "effect"
import { PlatformConfig, type PlatformOptions } from "../config/PlatformConfig.js"
import type { NotFound, ProgramInvalid } from "../http/Errors.js"
import { JobFailed, type JobLease, runJobWorkers } from "../jobs/JobWorkers.js"
import { type CandleSource, MarketData, venueOf } from "../market/MarketData.js"
import type { ProgramRunError } from "../sandbox/Decision.js"
import { unlistedRules } from "../trading/Fills.js"
import { type Candle, timeframeMillis, type UnknownSymbol } from "../venues/Venue.js"
import { alignBars } from "./AlignedBars.js"
import { type BacktestSettings, defaultSettings } from "./Backtest.js"
import { backtestJobs, type BacktestRow, BacktestsRepo } from "./BacktestsRepo.js"
import { type BacktestThread, backtestThreads } from "./BacktestThread.js"
import type { FundingSource, ThreadMarket } from "./BacktestThreadProtocol.js"
import { packBars } from "./PackedBars.js"

/**
 * The most bars fetched and sent to the thread between two checkpoints (progress, lease renewal,
 * cancellation). Each window costs a round trip, a checkpoint write and a piece of the thread's
 * time waiting for it: with 1,000 a year of one-minute bars took 506 windows and its job about 25%
 * longer than with 10,000 (51 windows); 50,000 gained nothing more (docs/performance.md).
 */
export const barsPerCheckpoint = 10_000

/**
 * The longest span of one window. The simulated venue computes each bar from the minutes it spans,
 * on the main thread, in one go that neither a request nor a cancellation nor a shutdown can
 * interrupt (and the thread walks the same minutes for the funding): measured on an idle machine,
 * 1,000 daily bars took 568 ms, 10,000 hourly ones 215 ms, 100 daily ones 54 ms and 10,000
 * one-minute ones 16 ms. So a window of coarse bars spans at most 100 days.
 */
const longestWindowMillis = 100 * timeframeMillis["1d"]

/** The span of one window of bars `step` ms long: `barsPerCheckpoint` of them, or as many as fit in the longest span (at least one). */
export const windowMillis = (step: number) =>
  step * Math.max(1, Math.min(barsPerCheckpoint, Math.floor(longestWindowMillis / step)))

/** Every program run gets the same seed, so the same request gives the same result. */
const seed = 1

/** What of a run's request sets its terms: the market, the range and the trading settings. */
export type RunTermsInput = Pick<
  BacktestRow,
  | "symbols"
  | "timeframe"
  | "start_at"
  | "end_at"
  | "initial_balance"
  | "fee_rate"
  | "maker_fee_rate"
  | "slippage"
  | "slippage_model"
  | "fill_timing"
  | "margin_mode"
  | "leverage"
>

/**
 * A run's engine settings and each symbol's terms: its rules at the venue (a dataset's symbol the
 * venue does not list trades by the venue's margin table alone) and where its funding payments
 * come from (a dataset has none of its own: its runs pay none; the simulation's are computed in
 * the thread). Backtests and optimisation trials alike.
 */
export const runTerms = (
  market: MarketData,
  venues: PlatformOptions["venues"],
  row: RunTermsInput,
  source: CandleSource
) =>
  Effect.gen(function*() {
    const venue = venueOf(source)
    const listed = (yield* market.symbols({ exchange: venue })).symbols
    const settings: BacktestSettings = {
      ...defaultSettings(row.timeframe, venue),
      initialBalance: row.initial_balance,
      takerFeeRate: row.fee_rate,
      makerFeeRate: row.maker_fee_rate,
      slippage: row.slippage,
      slippageModel: row.slippage_model,
      fillTiming: row.fill_timing,
      marginMode: row.margin_mode,
      leverage: row.leverage
    }
    const markets = yield* Effect.forEach(row.symbols, (symbol) =>
      Effect.gen(function*() {
        const rules = listed.find((s) => s.symbol === symbol) ?? unlistedRules(symbol, venues.marginTables[venue])
        const funding: FundingSource = source._tag === "Venue" && venues[venue].mode !== "http"
          ? { _tag: "Simulated", seed: venues.simulationSeed, venue, correlation: venues.simulationCorrelation }
          : {
            _tag: "Rates",
            rates: yield* market.fundingRates(source, {
              symbol,
              start: Date.parse(row.start_at),
              end: Date.parse(row.end_at)
            })
          }
        return { rules, funding } satisfies ThreadMarket
      }))
    return { settings: { ...settings, rules: markets[0]!.rules }, markets }
  })

/**
 * A run's failures that another attempt would repeat (its program's own, a symbol or dataset gone
 * since it was queued) fail its job for good, naming the bar where the program failed.
 */
export const failForGood = (run: { readonly start_at: string; readonly exchange: string }) =>
  Effect.catchTags({
    ProgramRunError: (e: ProgramRunError) =>
      new JobFailed({
        message: `Program error (${e.reason})${
          e.time === undefined
            ? ""
            : ` at the ${e.time < Date.parse(run.start_at) ? "warm-up " : ""}bar of ${new Date(e.time).toISOString()}`
        }: ${e.message}`
      }),
    ProgramInvalid: (e: ProgramInvalid) => new JobFailed({ message: `Program does not load: ${e.error}` }),
    UnknownSymbol: (e: UnknownSymbol) => new JobFailed({ message: `Unknown symbol on ${run.exchange}: ${e.symbol}` }),
    // The dataset was deleted since the run was queued.
    NotFound: (e: NotFound) => new JobFailed({ message: e.error })
  })

/**
 * The backtest workers of this instance (see `runJobWorkers`), started with the platform and
 * stopped with its scope. Each job runs in a worker thread, one job at a time, the threads kept
 * warm for the next jobs (see `backtestThreads`), so nothing the program does can block this
 * thread. This side keeps what needs the database and the venues: it fetches the candles a
 * window at a time (`windowMillis`) and sends each window to the thread, checkpoints before each
 * window and while the thread steps one, and hands the outcome to the job workers to write.
 */
export const BacktestWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options, sandbox, venues } = yield* PlatformConfig
    const repo = yield* BacktestsRepo
    const market = yield* MarketData
    const thread = yield* backtestThreads(sandbox, options.concurrency)

    /**
     * Feeds the thread the job's bars, oldest first, a window each time it asks, until it answers
     * the outcome: each symbol's candles, aligned (see `alignBars`). A checkpoint before each
     * window writes progress, renews the lease and stops the run when the row is no longer its
     * own; while the thread steps a window (or loads the program), the lease is kept alive, so a
     * slow program keeps its job.
     */
    const feed = (row: BacktestRow, source: CandleSource, thread: BacktestThread, lease: JobLease) =>
      Effect.gen(function*() {
        const step = timeframeMillis[row.timeframe]
        const start = Math.ceil(Date.parse(row.start_at) / step) * step
        const end = Date.parse(row.end_at)
        const carried: Array<Candle | undefined> = row.symbols.map(() => undefined)
        const window = (from: number, to: number) =>
          Effect.gen(function*() {
            const candles = yield* Effect.forEach(
              row.symbols,
              (symbol) => market.candles(source, { symbol, timeframe: row.timeframe, start: from, end: to })
            )
            const bars = alignBars(candles, carried)
            if (bars !== undefined) return bars
            const missing = row.symbols.filter((_, s) => candles[s]!.length === 0 && carried[s] === undefined)
            return yield* new JobFailed({
              message: `No ${row.timeframe} candles of ${missing.join(", ")} from ${new Date(from).toISOString()} to ${
                new Date(to).toISOString()
              }`
            })
          })
        let from = start
        let warmedUp = false
        const windowFrom = (from: number) => window(from, Math.min(end, from + windowMillis(step)))
        // The window to send next: after the first, read while the thread steps the one before it.
        let next = windowFrom(start)
        for (;;) {
          const message = yield* lease.keepAlive(thread.take)
          if (message._tag === "Done") return message.outcome
          // The first ask is for the warm-up: the bars before the start, as many as there are up to
          // `warmup_bars` (a symbol without them leaves the warm-up to the others).
          if (!warmedUp) {
            warmedUp = true
            const warmup = row.warmup_bars === 0 ? [] : yield* window(start - row.warmup_bars * step, start).pipe(
              Effect.catchTag("JobFailed", () => Effect.succeed([]))
            )
            yield* thread.post({ _tag: "Warmup", bars: packBars(warmup) })
            continue
          }
          if (from >= end) {
            yield* thread.post({ _tag: "End" })
            continue
          }
          yield* lease.checkpoint((from - start) / (end - start))
          yield* thread.post({ _tag: "Window", bars: packBars(yield* next) })
          from = Math.min(end, from + windowMillis(step))
          if (from < end) next = Fiber.join(yield* Effect.fork(windowFrom(from)))
        }
      })

    const run = (row: BacktestRow, lease: JobLease) => {
      const program = {
        code: row.code,
        symbols: row.symbols,
        timeframe: row.timeframe,
        timeframes: row.timeframes,
        params: row.params,
        seed
      }
      return Effect.gen(function*() {
        const source = yield* market.source({ id: row.user_id }, row.exchange)
        const { markets, settings } = yield* lease.keepAlive(runTerms(market, venues, row, source))
        return yield* feed(row, source, yield* thread({ run: program, settings, markets }), lease)
      }).pipe(failForGood(row))
    }

    yield* runJobWorkers({ kind: backtestJobs.table, queue: repo.jobs, options, run })
  })
)
