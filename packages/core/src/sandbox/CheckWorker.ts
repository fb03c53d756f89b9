import { Effect, Scope } from "effect"
import { type ProgramInvalid, Unavailable } from "../http/Errors.js"
import { keptWarm, startWorkerThread } from "../jobs/WorkerThread.js"
import { type LoadFailure, loadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

const stalled = (millis: number) =>
  new Unavailable({
    error:
      `The program did not finish loading within the sandbox's safety net of ${millis} ms of wall time, before its CPU budget ran out: the server is overloaded, or the program is stuck in work the budget does not count. Try again later.`
  })

export interface CheckThreadInput {
  readonly limits: SandboxLimits
  /** Added by `startWorkerThread`, see `jobs/Heartbeat.ts`. */
  readonly heartbeat: SharedArrayBuffer
}

/** A check thread: loads one program at a time; `reusable` once its last check has answered. */
interface CheckThread {
  readonly check: (code: string) => Effect.Effect<unknown, ProgramInvalid | Unavailable>
  readonly reusable: () => boolean
}

let started = 0

/** Check threads this process has started (for tests). */
export const checkThreadsStarted = () => started

const startCheckThread = (limits: SandboxLimits): Effect.Effect<CheckThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const thread = yield* startWorkerThread({
      entry: "sandbox/CheckThreadEntry",
      workerData: { limits } satisfies Omit<CheckThreadInput, "heartbeat">,
      name: "program check thread",
      stallMillis: 2 * limits.wallMillisPerCall,
      onStart: () => started++
    })
    let answered = true
    return {
      reusable: () => answered,
      check: (code) =>
        Effect.gen(function*() {
          answered = false
          yield* thread.post({ code })
          const event = yield* thread.take
          switch (event._tag) {
            case "Died":
              return yield* Effect.die(event.message)
            case "Stalled":
              return yield* stalled(2 * limits.wallMillisPerCall)
            case "Message": {
              answered = true
              const outcome = event.message as { loaded: true; parameters: unknown } | { stalled: true } | LoadFailure
              if ("stalled" in outcome) return yield* stalled(limits.wallMillisPerCall)
              if ("overBudget" in outcome) return yield* loadFailure(outcome)
              return outcome.parameters
            }
          }
        })
    }
  })

/**
 * Checks run at once: beyond, a check waits for a thread. A check whose program is stuck holds its
 * thread until the watchdog ends it (twice the safety net), so there are more than the cores.
 */
const checkThreads = 8

/**
 * Loads programs in worker threads, kept warm between checks (see `keptWarm`), which the
 * watchdog terminates if one call outlives twice its wall-clock safety net: a program's top-level
 * code may call built-ins that QuickJS cannot interrupt, and the server's event loop must not wait
 * for them. Only the counted budget is the program's verdict (422); a load the safety net or the
 * watchdog stopped answers 503. A check answers the program's `parameters` export as data
 * (undefined without one). The threads start on the first check, so a runtime that never checks
 * (a backtest thread's) starts none.
 */
export const programChecks = (limits: SandboxLimits) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const borrow = yield* Effect.cached(Scope.extend(keptWarm(startCheckThread(limits), checkThreads), scope))
    return (code: string): Effect.Effect<unknown, ProgramInvalid | Unavailable> =>
      Effect.scoped(Effect.flatMap(Effect.flatten(borrow), (thread) => thread.check(code)))
  })
