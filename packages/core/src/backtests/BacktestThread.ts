import { Data, Effect, Schema, type Scope } from "effect"
import type { ProgramInvalid } from "../http/Errors.js"
import { keptWarm, startWorkerThread, type WorkerThreadEvent } from "../jobs/WorkerThread.js"
import { ProgramRunError } from "../sandbox/Decision.js"
import type { SandboxLimits } from "../sandbox/SandboxLimits.js"
import { type BacktestRun, FromThread, type ToThread } from "./BacktestThreadProtocol.js"

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

let started = 0
let live = 0
let busy = 0

/**
 * This process's backtest threads (for monitoring and tests): how many were started, how many
 * have not exited yet (idle ones included), and how many are running a backtest or were stopped in
 * one and have not exited yet.
 */
export const backtestThreadCounts = () => ({ started, live, busy })

type Taken = Extract<FromThread, { _tag: "Pull" | "Done" }>

/** A backtest running in a thread, as the main thread drives it. */
export interface BacktestThread {
  /**
   * The thread's next message: `Pull` for the next window, or `Done` with the outcome. Fails with
   * the program's failure (including a stall the watchdog stopped) or when the thread died.
   */
  readonly take: Effect.Effect<Taken, ProgramRunError | ProgramInvalid | BacktestThreadDied>
  readonly post: (message: ToThread) => Effect.Effect<void>
}

/** A thread between runs: `start` begins one; `reusable` says whether the last one has ended as a run should. */
interface WarmThread {
  readonly start: (run: BacktestRun) => Effect.Effect<BacktestThread>
  readonly reusable: () => boolean
}

/**
 * Starts a backtest thread (`BacktestThreadEntry`) that runs one backtest at a time, terminated
 * when the scope closes. The watchdog terminates a thread whose program has been in one call for
 * over twice `wallMillisPerCall`, which is not the program's verdict.
 */
const startWarmThread = (limits: SandboxLimits): Effect.Effect<WarmThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stallMillis = 2 * limits.wallMillisPerCall
    let running = false
    const stopped = () => {
      if (running) busy--
      running = false
    }
    const thread = yield* startWorkerThread({
      entry: "backtests/BacktestThreadEntry",
      workerData: { limits },
      name: "backtest thread",
      resourceLimits,
      stallMillis,
      onStart: () => {
        started++
        live++
      },
      onExit: () => {
        live--
        stopped()
      }
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
                  stopped()
                  return Effect.fail(message.error)
                case "Crashed":
                  return Effect.fail(
                    new BacktestThreadDied({ message: `The backtest thread failed: ${message.message}` })
                  )
                case "Pull":
                  loaded = true
                  return Effect.succeed(message)
                case "Done":
                  stopped()
                  return Effect.succeed(message)
              }
            }
          )
      }
    })

    return {
      start: (run) =>
        Effect.suspend(() => {
          running = true
          busy++
          loaded = false
          return Effect.as(thread.post({ _tag: "Run", ...run } satisfies ToThread), { take, post: thread.post })
        }),
      reusable: () => !running
    }
  })

/** Runs one backtest in a thread of its own, terminated when the scope closes (the run ended, or was stopped). */
export const startBacktestThread = (
  input: BacktestRun & { readonly limits: SandboxLimits }
): Effect.Effect<BacktestThread, never, Scope.Scope> =>
  Effect.flatMap(startWarmThread(input.limits), (thread) => thread.start(input))

/**
 * The instance's backtest threads, at most `size` at once, kept warm for the next run (see
 * `keptWarm`): a thread whose run did not end as a run does (cancelled, taken over, the thread
 * crashed or was stopped) is ended, not reused.
 */
export const backtestThreads = (limits: SandboxLimits, size: number) =>
  Effect.map(
    keptWarm(startWarmThread(limits), size),
    (borrow) => (run: BacktestRun): Effect.Effect<BacktestThread, never, Scope.Scope> =>
      Effect.flatMap(borrow, (thread) => thread.start(run))
  )
