import { Effect, Pool, Schema, Scope } from "effect"
import { ProgramInvalid } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { startWorkerThread } from "../jobs/WorkerThread.js"
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

/**
 * Programs decide in worker threads (`LiveDecisionEntry`), as backtests run, so nothing a program
 * does can stall the server. The threads are kept in a pool of `size` (one per run worker) and
 * reused, since starting one costs far more than a decision; each decision still loads the program
 * in a QuickJS instance of its own. A thread's watchdog stops a call stuck for over twice the
 * wall-clock safety net, which is not the program's verdict (`DecisionThreadDied`); a stopped or dead thread leaves
 * the pool and a new one takes its place. The pool is started by the first decision (a server
 * that runs no programs starts no threads, and start-up does not wait for them) and lives as long
 * as the scope.
 */
export const makeDecisionThreads = (limits: SandboxLimits, size: number) =>
  Effect.gen(function*() {
    const stallMillis = 2 * limits.wallMillisPerCall
    const scope = yield* Effect.scope
    const pool = yield* Effect.cached(
      Pool.make({
        acquire: startWorkerThread({
          entry: "automation/LiveDecisionEntry",
          workerData: { limits } satisfies DecisionThreadInput,
          name: "decision thread",
          resourceLimits: { maxOldGenerationSizeMb: 256 },
          stallMillis
        }),
        size
      }).pipe(Scope.extend(scope))
    )

    const decide = (request: DecisionRequest) =>
      Effect.gen(function*() {
        const thread = yield* Effect.flatMap(pool, (threads) => threads.get)
        yield* thread.post(request)
        const event = yield* thread.take
        if (event._tag !== "Message") yield* Effect.flatMap(pool, (threads) => threads.invalidate(thread))
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
      }).pipe(Effect.scoped, withRequestSpan("DecisionThreads.decide"))

    return { decide } as const
  })
