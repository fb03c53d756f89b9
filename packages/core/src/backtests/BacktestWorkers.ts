import { Cause, Clock, Data, Duration, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { type Candle, timeframeMillis, Venues } from "../venues/Venue.js"
import { defaultSettings } from "./BacktestEngine.js"
import { BacktestSignal } from "./BacktestSignal.js"
import { type BacktestThread, startBacktestThread } from "./BacktestThread.js"
import { type BacktestRow, BacktestsRepo } from "./BacktestsRepo.js"

/** Bars fetched and sent to the thread between two checkpoints (progress, lease renewal, cancellation). */
export const barsPerCheckpoint = 1_000

/** Every program run gets the same seed, so the same request gives the same result. */
const seed = 1

/** The run was cancelled or taken over by another worker: stop without writing. */
class Stopped extends Data.TaggedError("Stopped") {}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const messageOf = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  if (typeof error === "object" && error !== null && "error" in error && typeof error.error === "string") return error.error
  return error instanceof Error ? error.message : String(error)
}

/**
 * The pool of backtest workers of this instance, started with the platform and stopped with its
 * scope. Each worker claims one job at a time from the database (any replica may run any job;
 * the claim hands a job to one worker) and runs it in a worker thread of its own (see
 * `startBacktestThread`), so nothing the program does can block this thread. This side keeps what
 * needs the database and the venues: it fetches the candles `barsPerCheckpoint` bars at a time and
 * sends each window to the thread, writes progress and a renewed lease before each window and
 * while the thread steps one, and writes the outcome. A job whose worker died is claimed again
 * once its lease expires.
 */
export const BacktestWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options, sandbox } = yield* PlatformConfig
    const repo = yield* BacktestsRepo
    const venues = yield* Venues
    const signal = yield* BacktestSignal
    const worker = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`
    const leaseUntil = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms + Duration.toMillis(options.lease)))

    /**
     * Feeds the thread the job's candles, oldest first, a window each time it asks, until it
     * answers the outcome. Before each window a checkpoint writes progress, renews the lease and
     * stops the run when the row is no longer its own; while the thread steps a window (or loads
     * the program), the same checkpoint repeats every third of the lease, so a slow program keeps
     * its lease.
     */
    const feed = (row: BacktestRow, thread: BacktestThread) =>
      Effect.gen(function*() {
        const run = { id: row.id, attempts: row.attempts }
        const step = timeframeMillis[row.timeframe]
        const start = Math.ceil(Date.parse(row.start_at) / step) * step
        const end = Date.parse(row.end_at)
        const checkpoint = (at: number) =>
          Effect.gen(function*() {
            const ours = yield* repo.checkpoint(run, (at - start) / (end - start), yield* leaseUntil)
            if (!ours) return yield* new Stopped()
          })
        const renewWhileWaiting = (at: number) =>
          Effect.forever(Effect.zipRight(Effect.sleep(Duration.toMillis(options.lease) / 3), checkpoint(at)))
        let from = start
        let checkpointed = start
        for (;;) {
          const message = yield* Effect.raceFirst(thread.take, renewWhileWaiting(checkpointed))
          if (message._tag === "Done") return message.outcome
          if (from >= end) {
            yield* thread.post({ _tag: "End" })
            continue
          }
          yield* checkpoint(from)
          checkpointed = from
          const to = Math.min(end, from + barsPerCheckpoint * step)
          const candles: ReadonlyArray<Candle> = yield* venues[row.exchange].candles({
            symbol: row.symbol,
            timeframe: row.timeframe,
            start: from,
            end: to
          })
          yield* thread.post({ _tag: "Window", candles })
          from = to
        }
      })

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
      const program = { code: row.code, symbol: row.symbol, timeframe: row.timeframe, params: {}, seed }
      return startBacktestThread({ run: program, settings, limits: sandbox }).pipe(
        Effect.flatMap((thread) => feed(row, thread)),
        Effect.scoped,
        Effect.flatMap((outcome) => Effect.flatMap(now, (at) => repo.complete(job, outcome, at))),
        Effect.catchTags({
          // Whoever holds the row now (the canceller, or a worker that took it over) has the last word.
          Stopped: () => Effect.void,
          // The program's own failure: running it again would fail the same way.
          ProgramRunError: (e) =>
            fail(`Program error (${e.reason})${e.time === undefined ? "" : ` at the bar of ${new Date(e.time).toISOString()}`}: ${e.message}`),
          ProgramInvalid: (e) => fail(`Program does not load: ${e.error}`),
          UnknownSymbol: (e) => fail(`Unknown symbol on ${row.exchange}: ${e.symbol}`)
        }),
        // Anything else (the venue or the database failing, the thread dying, a defect) hands the
        // job back for another attempt; the attempt limit ends a job that keeps killing its thread.
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
