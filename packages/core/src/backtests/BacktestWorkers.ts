import { Cause, Chunk, Clock, Data, Duration, Effect, Layer, Option, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { type Candle, timeframeMillis, Venues } from "../venues/Venue.js"
import type { BacktestOutcome } from "./Backtest.js"
import { type BacktestResult, defaultSettings, type EquityPoint, runBacktest } from "./BacktestEngine.js"
import { BacktestSignal } from "./BacktestSignal.js"
import { type BacktestRow, BacktestsRepo } from "./BacktestsRepo.js"

/** Bars fetched and stepped between two checkpoints (progress, lease renewal, cancellation). */
export const barsPerCheckpoint = 1_000

/** Bars stepped at once; between slices the worker yields to the event loop and renews its lease when due. */
export const barsPerSlice = 50

/** Most points of an equity curve a backtest keeps. */
export const maxEquityPoints = 1_000

/** Every program run gets the same seed, so the same request gives the same result. */
const seed = 1

/**
 * Lets the event loop serve I/O between chunks. With an in-process database every step of a run
 * can resolve as a microtask, which would keep requests and timers waiting until the run ends.
 */
const yieldToEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** The run was cancelled or taken over by another worker: stop without writing. */
class Stopped extends Data.TaggedError("Stopped") {}

/** Evenly spaced points of the curve, always keeping the first and the last. */
export const downsample = (points: ReadonlyArray<EquityPoint>, max = maxEquityPoints): ReadonlyArray<EquityPoint> => {
  if (points.length <= max) return points
  return Array.from({ length: max }, (_, i) => points[Math.round((i * (points.length - 1)) / (max - 1))]!)
}

const outcomeOf = (result: BacktestResult): BacktestOutcome => ({
  metrics: result.metrics,
  final_balance: result.final_balance,
  equity_curve: downsample(result.equity_curve),
  trades: result.trades
})

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const messageOf = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  if (typeof error === "object" && error !== null && "error" in error && typeof error.error === "string") return error.error
  return error instanceof Error ? error.message : String(error)
}

/**
 * The pool of backtest workers of this instance, started with the platform and stopped with its
 * scope. Each worker claims one job at a time from the database (any replica may run any job;
 * the claim hands a job to one worker), runs it, and writes progress and a renewed lease every
 * `barsPerCheckpoint` bars; a job whose worker died is claimed again once its lease expires.
 *
 * Limitation: a program runs on this thread. Its calls are CPU-capped, but a built-in QuickJS
 * cannot interrupt can hold the thread until the call's wall-clock cap.
 */
export const BacktestWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options } = yield* PlatformConfig
    const repo = yield* BacktestsRepo
    const venues = yield* Venues
    const runtime = yield* ProgramRuntime
    const signal = yield* BacktestSignal
    const worker = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`
    const leaseUntil = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms + Duration.toMillis(options.lease)))

    /**
     * The job's candles, oldest first, in slices of `barsPerSlice`. Before each window of
     * `barsPerCheckpoint` bars is fetched, and before any slice once a third of the lease has
     * passed since the last one, a checkpoint writes progress, renews the lease and stops the run
     * when the row is no longer its own; so a slow program keeps its lease.
     */
    const candles = (row: BacktestRow) => {
      const run = { id: row.id, attempts: row.attempts }
      const step = timeframeMillis[row.timeframe]
      const start = Math.ceil(Date.parse(row.start_at) / step) * step
      const end = Date.parse(row.end_at)
      const renewEvery = Duration.toMillis(options.lease) / 3
      let lastCheckpoint = -Infinity
      const checkpoint = (at: number) =>
        Effect.gen(function*() {
          const ours = yield* repo.checkpoint(run, (at - start) / (end - start), yield* leaseUntil)
          if (!ours) return yield* new Stopped()
          lastCheckpoint = yield* Clock.currentTimeMillis
        })
      const windows = Stream.unfoldChunkEffect(start, (from) =>
        from >= end ? Effect.succeed(Option.none()) : Effect.gen(function*() {
          yield* checkpoint(from)
          const to = Math.min(end, from + barsPerCheckpoint * step)
          const bars: ReadonlyArray<Candle> = yield* venues[row.exchange].candles({
            symbol: row.symbol,
            timeframe: row.timeframe,
            start: from,
            end: to
          })
          return Option.some([Chunk.fromIterable(bars), to] as const)
        }))
      return windows.pipe(
        Stream.rechunk(barsPerSlice),
        Stream.mapChunksEffect((slice) =>
          Effect.gen(function*() {
            yield* yieldToEventLoop
            const first = Chunk.head(slice)
            if (Option.isSome(first) && (yield* Clock.currentTimeMillis) - lastCheckpoint >= renewEvery) {
              yield* checkpoint(first.value.time)
            }
            return slice
          })
        )
      )
    }

    const run = (row: BacktestRow) => {
      const job = { id: row.id, attempts: row.attempts }
      const settings = {
        ...defaultSettings(row.timeframe),
        initialBalance: row.initial_balance,
        feeRate: row.fee_rate,
        slippage: row.slippage,
        leverage: row.leverage
      }
      const fail = (error: string) => Effect.flatMap(now, (at) => repo.fail(job, error, at))
      if (row.attempts > options.maxAttempts) {
        return fail(`Gave up after ${options.maxAttempts} attempts${row.error === null ? "" : `: ${row.error}`}`)
      }
      return runtime.load({ code: row.code, symbol: row.symbol, timeframe: row.timeframe, params: {}, seed }).pipe(
        Effect.flatMap((decide) => runBacktest(settings, candles(row), decide)),
        Effect.scoped,
        Effect.flatMap((result) => Effect.flatMap(now, (at) => repo.complete(job, outcomeOf(result), at))),
        Effect.catchTags({
          // Whoever holds the row now (the canceller, or a worker that took it over) has the last word.
          Stopped: () => Effect.void,
          // The program's own failure: running it again would fail the same way.
          ProgramRunError: (e) => fail(`Program error (${e.reason}): ${e.message}`),
          ProgramInvalid: (e) => fail(`Program does not load: ${e.error}`),
          UnknownSymbol: (e) => fail(`Unknown symbol on ${row.exchange}: ${e.symbol}`)
        }),
        // Anything else (the venue or the database failing, a defect) hands the job back for another attempt.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.flatMap(now, (at) => repo.release(job, messageOf(cause), at))
        ),
        // Stopping (a shutdown) hands it back at once rather than when the lease runs out.
        Effect.onInterrupt(() => Effect.ignore(Effect.flatMap(now, (at) => repo.release(job, "The worker stopped", at)))),
        Effect.withSpan("BacktestWorkers.run", { attributes: { backtestId: row.id, attempt: row.attempts } })
      )
    }

    const claimAndRun = Effect.gen(function*() {
      const claimed = yield* repo.claim({ now: yield* now, lease_until: yield* leaseUntil, worker })
      if (Option.isNone(claimed)) return yield* signal.idle(options.pollInterval)
      yield* run(claimed.value)
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.zipRight(Effect.logWarning("Backtest worker failed; retrying", cause), Effect.sleep(options.pollInterval))
      )
    )

    for (let i = 0; i < options.concurrency; i++) yield* Effect.forkScoped(Effect.forever(claimAndRun))
  })
)
