import { Context, type Effect, type Scope } from "effect"
import type { ProgramInvalid, Unavailable } from "../http/Errors.js"
import type { Timeframe } from "../venues/Venue.js"
import type { Decider } from "./Decider.js"

/** What one run of a program sees besides the bars. */
export interface ProgramRun {
  /** The program as JavaScript (TypeScript is compiled first, see `compileProgram`). */
  readonly code: string
  /** The symbols it trades, the first being `data.symbol`; their bars come aligned, in this order. */
  readonly symbols: ReadonlyArray<string>
  readonly timeframe: Timeframe
  /** Longer timeframes whose closed candles it reads (`data.timeframes`), built from its own bars. */
  readonly timeframes?: ReadonlyArray<Timeframe>
  /** Passed to the program as `data.params`; must be JSON. */
  readonly params: unknown
  /** Seeds the program's `Math.random`, so a run can be repeated exactly. */
  readonly seed: number
}

/**
 * Whose runs a runtime layer serves: any program's (`shared`: each run gets an engine instance of
 * its own), or one program's runs one after another (`oneProgram`, a search's trial thread: each
 * run gets a fresh context in the engine instance the run before it used, which keeps what the
 * engine compiled and skips making an instance per run; V8 reuses the context itself while runs
 * leave its realm as they found it, see `guest/Realm.ts`; the host's values of `ta` on the window
 * are kept for the next runs over the same candles, see `makeIndicatorColumns`).
 */
export type RuntimeUse = "shared" | "oneProgram"

/**
 * Where programs run. `check` loads a program, requires an exported `decide` and answers its
 * `parameters` export as data (undefined without one; `Unavailable`
 * when the wall-clock safety net stopped it, which is not the program's verdict); `load` readies
 * one run and answers its `Decider`, which keeps the candle history and may throw
 * `ProgramRunError`, or `SandboxStalled` for the safety net. The run's resources are released with
 * the scope. `data.equity` is marked to each bar's close inside the runtime, as `BacktestEngine`
 * marks it.
 */
export class ProgramRuntime extends Context.Tag("@trading-platform/core/ProgramRuntime")<ProgramRuntime, {
  readonly check: (code: string) => Effect.Effect<unknown, ProgramInvalid | Unavailable>
  readonly load: (run: ProgramRun) => Effect.Effect<Decider, ProgramInvalid, Scope.Scope>
}>() {}
