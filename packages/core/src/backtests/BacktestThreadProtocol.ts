import { Cause, Either, Exit, Schema } from "effect"
import { ProgramInvalid } from "../http/Errors.js"
import { ProgramRunError } from "../sandbox/Decision.js"
import type { ProgramRun } from "../sandbox/ProgramRuntime.js"
import type { SandboxLimits } from "../sandbox/SandboxLimits.js"
import type { FundingRate, SymbolSpec } from "../venues/Venue.js"
import { BacktestOutcome, type BacktestResult, type BacktestSettings, type EquityPoint } from "./Backtest.js"
import type { PackedBars } from "./PackedBars.js"

/** Most points of an equity curve a backtest keeps. */
export const maxEquityPoints = 1_000

/** Evenly spaced points of the curve, always keeping the first and the last. */
export const downsample = (points: ReadonlyArray<EquityPoint>, max = maxEquityPoints): ReadonlyArray<EquityPoint> => {
  if (points.length <= max) return points
  return Array.from({ length: max }, (_, i) => points[Math.round((i * (points.length - 1)) / (max - 1))]!)
}

/** What a completed run stores; computed in the thread, so only the downsampled curve crosses over. */
export const outcomeOf = (result: BacktestResult): BacktestOutcome => ({
  metrics: result.metrics,
  per_symbol: result.per_symbol,
  final_balance: result.final_balance,
  equity_curve: downsample(result.equity_curve),
  trades: result.trades,
  fills: result.fills,
  warmed_up_bars: result.warmed_up_bars
})

/**
 * Where a backtest's funding payments come from: the venue's history (read from the candle store
 * before the run), or the simulated venue's, computed in the thread a window at a time since it
 * walks the simulated market minute by minute (decades of it take seconds).
 */
export type FundingSource =
  | { readonly _tag: "Rates"; readonly rates: ReadonlyArray<FundingRate> }
  | { readonly _tag: "Simulated"; readonly seed: number; readonly venue: string; readonly correlation: number }

/** A symbol the run trades: its rules at the venue, and where its funding payments come from. */
export interface ThreadMarket {
  readonly rules: SymbolSpec
  readonly funding: FundingSource
}

/** What a backtest thread starts with (its `workerData`): what all its runs share. */
export interface BacktestThreadInput {
  readonly limits: SandboxLimits
  /** Added by `startWorkerThread`, see `jobs/Heartbeat.ts`. */
  readonly heartbeat: SharedArrayBuffer
}

/** One backtest a thread runs: its program, settings and symbols. */
export interface BacktestRun {
  readonly run: ProgramRun
  readonly settings: BacktestSettings
  /** The symbols traded, in `run.symbols`' order. */
  readonly markets: ReadonlyArray<ThreadMarket>
}

/**
 * From the main thread: a run to start, once the one before has ended; then, each time the run
 * asks, first the bars before the start to warm the program up with (maybe none), then the next
 * window of bars (oldest first, one array per symbol, aligned, packed), or the end of the range.
 */
export type ToThread =
  | ({ readonly _tag: "Run" } & BacktestRun)
  | { readonly _tag: "Warmup"; readonly bars: PackedBars }
  | { readonly _tag: "Window"; readonly bars: PackedBars }
  | { readonly _tag: "End" }

/** How a run fails because of its program; the main thread handles these as it always did. */
export const ProgramFailure = Schema.Union(ProgramRunError, ProgramInvalid)

/**
 * From the thread: `Pull` asks for the next window (so it also acknowledges the previous one),
 * then `Done` or `Failed` end the run; `Crashed` is a defect of the thread's own code.
 */
export const FromThread = Schema.Union(
  Schema.TaggedStruct("Pull", {}),
  Schema.TaggedStruct("Done", { outcome: BacktestOutcome }),
  Schema.TaggedStruct("Failed", { error: ProgramFailure }),
  Schema.TaggedStruct("Crashed", { message: Schema.String })
)
export type FromThread = typeof FromThread.Type

/**
 * How a run's end crosses to the main thread, in a backtest or a trial thread: its outcome, the
 * program's failure, or a defect of the thread's own code.
 */
export const runEnd = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.match(exit, {
    onSuccess: (outcome) => ({ _tag: "Done" as const, outcome }),
    onFailure: (cause) =>
      Either.match(Cause.failureOrCause(cause), {
        onLeft: (error) => ({ _tag: "Failed" as const, error }),
        onRight: (defect) => ({ _tag: "Crashed" as const, message: Cause.pretty(defect).split("\n")[0] ?? "" })
      })
  })
