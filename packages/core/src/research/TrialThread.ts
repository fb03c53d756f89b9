import { Effect, Schema, type Scope } from "effect"
import type { BacktestOutcome } from "../backtests/Backtest.js"
import { BacktestThreadDied, threadGone } from "../backtests/BacktestThread.js"
import type { ProgramInvalid } from "../http/Errors.js"
import { startWorkerThread } from "../jobs/WorkerThread.js"
import type { ProgramRunError } from "../sandbox/Decision.js"
import { TrialFromThread, type TrialMessage, type TrialThreadInput } from "./TrialThreadProtocol.js"

/** As a backtest thread's: a runaway allocation outside the sandbox ends this thread, not the server. */
const resourceLimits = { maxOldGenerationSizeMb: 1024 }

type Failure = ProgramRunError | ProgramInvalid | BacktestThreadDied

/**
 * A warm trial thread: runs one trial at a time of the optimisation it was started for;
 * `reusable` once its last trial has answered.
 */
export interface TrialThread {
  readonly run: (trial: TrialMessage) => Effect.Effect<BacktestOutcome, Failure>
  readonly reusable: () => boolean
}

/**
 * Starts a thread for one optimisation's trials (`TrialThreadEntry`), terminated when the scope
 * closes. Its watchdog is a backtest thread's: a program in one call for over twice
 * `wallMillisPerCall` has its thread stopped, which is not the program's verdict.
 */
export const startTrialThread = (
  input: Omit<TrialThreadInput, "heartbeat">
): Effect.Effect<TrialThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stallMillis = 2 * input.limits.wallMillisPerCall
    const thread = yield* startWorkerThread({
      entry: "research/TrialThreadEntry",
      workerData: input,
      name: "trial thread",
      resourceLimits,
      stallMillis
    })
    const decode = Schema.decodeUnknown(TrialFromThread)
    let answered = true
    const run: TrialThread["run"] = (trial) =>
      Effect.zipRight(
        Effect.zipRight(Effect.sync(() => answered = false), thread.post(trial)),
        Effect.flatMap(thread.take, (event): Effect.Effect<BacktestOutcome, Failure> => {
          switch (event._tag) {
            case "Died":
            case "Stalled":
              return Effect.fail(threadGone(event, stallMillis, "of a trial"))
            case "Message":
              return Effect.flatMap(
                Effect.orDie(decode(event.message)),
                (message): Effect.Effect<BacktestOutcome, Failure> => {
                  // A thread whose own code failed is not trusted with another trial.
                  answered = message._tag !== "Crashed"
                  switch (message._tag) {
                    case "Done":
                      return Effect.succeed(message.outcome)
                    case "Failed":
                      return Effect.fail(message.error)
                    case "Crashed":
                      return Effect.fail(
                        new BacktestThreadDied({ message: `The trial thread failed: ${message.message}` })
                      )
                  }
                }
              )
          }
        })
      )
    return { run, reusable: () => answered }
  })
