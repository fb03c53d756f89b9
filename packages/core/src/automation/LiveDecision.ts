import { Effect, Schema, Scope } from "effect"
import { ProgramInvalid } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { keptWarm, startWorkerThread } from "../jobs/WorkerThread.js"
import type { AccountState, Bars, Decider } from "../sandbox/Decider.js"
import { Decision, hold, ProgramRunError } from "../sandbox/Decision.js"
import type { ProgramRun } from "../sandbox/ProgramRuntime.js"
import type { SandboxLimits } from "../sandbox/SandboxLimits.js"

const unbounded = { floor: -Infinity, ceiling: Infinity }

/**
 * The decisions at the last of `bars` (one array per symbol, aligned), one per symbol: every bar
 * is fed to the program in turn, as a backtest would (so `data.candles`, `ta` and the program's
 * own state build up the same way), with the account as it is now; decisions before the last bar
 * are its warm-up and are dropped. The last bar's decisions are the program's own even when they
 * hold, so a hold keeps its reason.
 */
export const decideAtLastBar = (decider: Decider, bars: Bars, account: AccountState): ReadonlyArray<Decision> => {
  decider.chunk(bars)
  const bands = bars.map(() => unbounded)
  const last = bars[0]!.length - 1
  for (let from = 0; from < last;) {
    const stop = decider.decide(from, account, bands, last)
    from = stop.decisions ? stop.index + 1 : Math.max(stop.index, from + 1)
  }
  return decider.decide(last, account, bands, last + 1, true).decisions ?? bars.map(() => hold)
}

/** What a decision thread starts with (its `workerData`, with the heartbeat added). */
export interface DecisionThreadInput {
  readonly limits: SandboxLimits
}

/** One decision asked of a thread: the run, its symbols' bars (oldest first) and the account. */
export interface DecisionRequest {
  readonly run: ProgramRun
  readonly bars: Bars
  readonly account: AccountState
}

/** From the thread: the decision, the program's failure, or a defect of the thread's own code. */
export const FromDecisionThread = Schema.Union(
  Schema.TaggedStruct("Decided", { decisions: Schema.Array(Decision) }),
  Schema.TaggedStruct("Failed", { error: Schema.Union(ProgramRunError, ProgramInvalid) }),
  Schema.TaggedStruct("Crashed", { message: Schema.String })
)
export type FromDecisionThread = typeof FromDecisionThread.Type

/** The decision thread crashed, exited on its own or was stopped by the watchdog: not the program's verdict, so the run may be tried again. */
export class DecisionThreadDied
  extends Schema.TaggedError<DecisionThreadDied>()("DecisionThreadDied", { message: Schema.String })
{}

const decode = Schema.decodeUnknown(FromDecisionThread)

/** A decision thread: one decision at a time; `reusable` once its last one has been answered. */
const startDecisionThread = (limits: SandboxLimits, stallMillis: number) =>
  Effect.gen(function*() {
    const thread = yield* startWorkerThread({
      entry: "automation/LiveDecisionEntry",
      workerData: { limits } satisfies DecisionThreadInput,
      name: "decision thread",
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stallMillis
    })
    let answered = true
    const decide = (request: DecisionRequest) =>
      Effect.gen(function*() {
        answered = false
        yield* thread.post(request)
        const event = yield* thread.take
        switch (event._tag) {
          case "Died":
            return yield* new DecisionThreadDied({ message: event.message })
          case "Stalled":
            return yield* new DecisionThreadDied({
              message:
                `The program was stuck in one call for over ${stallMillis} ms (the sandbox's wall-clock safety net); its thread was stopped`
            })
          case "Message": {
            const message = yield* Effect.orDie(decode(event.message))
            // A thread whose own code failed is not trusted with another decision.
            answered = message._tag !== "Crashed"
            switch (message._tag) {
              case "Decided":
                return message.decisions
              case "Failed":
                return yield* Effect.fail(message.error)
              case "Crashed":
                return yield* new DecisionThreadDied({ message: `The decision thread failed: ${message.message}` })
            }
          }
        }
      })
    return { decide, reusable: () => answered }
  })

/**
 * Programs decide in worker threads (`LiveDecisionEntry`), as backtests run, so nothing a program
 * does can stall the server. Up to `size` threads (one per run worker) are kept warm between
 * decisions (see `keptWarm`), since starting one costs far more than a decision; each decision
 * still loads the program in a sandbox of its own. A thread's watchdog stops a call stuck for over
 * twice the wall-clock safety net, which is not the program's verdict (`DecisionThreadDied`); a
 * thread that did not answer (stopped, dead, or its decision interrupted, whose answer would
 * otherwise reach the next one) is not used again. The threads start with the first decision (a
 * server that runs no programs starts none, and start-up does not wait for them).
 */
export const makeDecisionThreads = (limits: SandboxLimits, size: number) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const borrow = yield* Effect.cached(
      Scope.extend(keptWarm(startDecisionThread(limits, 2 * limits.wallMillisPerCall), size), scope)
    )
    const decide = (request: DecisionRequest) =>
      Effect.flatMap(Effect.flatten(borrow), (thread) => thread.decide(request)).pipe(
        Effect.scoped,
        withRequestSpan("DecisionThreads.decide")
      )
    return { decide } as const
  })
