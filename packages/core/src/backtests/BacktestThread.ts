import { Data, Effect, Schema, type Scope } from "effect"
import type { ProgramInvalid } from "../http/Errors.js"
import { startWorkerThread, type WorkerThreadEvent } from "../jobs/WorkerThread.js"
import { ProgramRunError } from "../sandbox/Decision.js"
import { type BacktestThreadInput, FromThread, type ToThread } from "./BacktestThreadProtocol.js"

/**
 * The thread crashed, exited on its own, or was stopped by the watchdog: not the program's
 * verdict, so the job may be tried again.
 */
export class BacktestThreadDied extends Data.TaggedError("BacktestThreadDied")<{ readonly message: string }> {}

/**
 * Caps on the thread's own JavaScript heap, beyond QuickJS's (which lives in WASM memory): a
 * runaway allocation outside the sandbox ends this thread, not the server. The engine keeps one
 * equity point per bar, so a year of one-minute bars needs well under this.
 */
const resourceLimits = { maxOldGenerationSizeMb: 512 }

/**
 * A run's thread that died, or that the watchdog stopped while the program was stuck in one call
 * (`where`), as the run's failure: not the program's verdict.
 */
export const threadGone = (
  event: Extract<WorkerThreadEvent, { readonly _tag: "Died" | "Stalled" }>,
  stallMillis: number,
  where: string
) =>
  new BacktestThreadDied({
    message: event._tag === "Died"
      ? event.message
      : `The program was stuck in one call ${where} for over ${stallMillis} ms (the sandbox's wall-clock safety net); its thread was stopped`
  })

let live = 0

/** Backtest threads of this process that have not exited yet (for monitoring and tests). */
export const liveBacktestThreads = () => live

type Taken = Extract<FromThread, { _tag: "Pull" | "Done" }>

/** A running backtest thread, as the main thread drives it. */
export interface BacktestThread {
  /**
   * The thread's next message: `Pull` for the next window, or `Done` with the outcome. Fails with
   * the program's failure (including a stall the watchdog stopped) or when the thread died.
   */
  readonly take: Effect.Effect<Taken, ProgramRunError | ProgramInvalid | BacktestThreadDied>
  readonly post: (message: ToThread) => Effect.Effect<void>
}

/**
 * Runs one backtest of `run` in its own worker thread (`BacktestThreadEntry`), terminated when
 * the scope closes (the run ended, was cancelled or taken over, or the instance stops). The
 * watchdog terminates a thread whose program has been in one call for over twice
 * `wallMillisPerCall`, which is not the program's verdict either.
 */
export const startBacktestThread = (
  input: Omit<BacktestThreadInput, "heartbeat">
): Effect.Effect<BacktestThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stallMillis = 2 * input.limits.wallMillisPerCall
    const thread = yield* startWorkerThread({
      entry: "backtests/BacktestThreadEntry",
      workerData: input,
      name: "backtest thread",
      resourceLimits,
      stallMillis,
      onStart: () => live++,
      onExit: () => live--
    })
    let loaded = false

    const decode = Schema.decodeUnknown(FromThread)
    const take: BacktestThread["take"] = Effect.flatMap(thread.take, (event) => {
      switch (event._tag) {
        case "Died":
        case "Stalled":
          return Effect.fail(threadGone(event, stallMillis, loaded ? "of decide" : "while loading"))
        case "Message":
          return Effect.flatMap(
            Effect.orDie(decode(event.message)),
            (message): Effect.Effect<Taken, ProgramRunError | ProgramInvalid | BacktestThreadDied> => {
              switch (message._tag) {
                case "Failed":
                  return Effect.fail(message.error)
                case "Crashed":
                  return Effect.fail(
                    new BacktestThreadDied({ message: `The backtest thread failed: ${message.message}` })
                  )
                case "Pull":
                  loaded = true
                  return Effect.succeed(message)
                case "Done":
                  return Effect.succeed(message)
              }
            }
          )
      }
    })

    return { take, post: thread.post }
  })
