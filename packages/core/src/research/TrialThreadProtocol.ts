import { Schema } from "effect"
import { BacktestOutcome, type BacktestSettings } from "../backtests/Backtest.js"
import { ProgramFailure, type ThreadMarket } from "../backtests/BacktestThreadProtocol.js"
import type { PackedBars } from "../backtests/PackedBars.js"
import type { ProgramRun } from "../sandbox/ProgramRuntime.js"
import type { SandboxLimits } from "../sandbox/SandboxLimits.js"

/**
 * What a trial thread starts with (its `workerData`): one optimisation's program, terms and bars
 * (every bar of its range, with the warm-up before it), read once and shared by all its trials and
 * threads (packed in shared memory).
 */
export interface TrialThreadInput {
  readonly run: Omit<ProgramRun, "params">
  readonly settings: BacktestSettings
  readonly markets: ReadonlyArray<ThreadMarket>
  readonly limits: SandboxLimits
  readonly bars: PackedBars
  /** Added by `startWorkerThread`, see `jobs/Heartbeat.ts`. */
  readonly heartbeat: SharedArrayBuffer
}

/**
 * One trial: the program with `params`, over the bars from `start` (included) to `end` (excluded),
 * warmed up with up to `warmup` bars before `start`. `full` keeps the curve, trades and fills;
 * otherwise the metrics come back with a compact curve (for the overfitting figures), no trades.
 */
export interface TrialMessage {
  readonly params: unknown
  readonly start: number
  readonly end: number
  readonly warmup: number
  readonly full: boolean
}

export const TrialFromThread = Schema.Union(
  Schema.TaggedStruct("Done", { outcome: BacktestOutcome }),
  Schema.TaggedStruct("Failed", { error: ProgramFailure }),
  Schema.TaggedStruct("Crashed", { message: Schema.String })
)
export type TrialFromThread = typeof TrialFromThread.Type
