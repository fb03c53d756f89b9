import { Effect } from "effect"
import { type ProgramInvalid, Unavailable } from "../http/Errors.js"
import { startWorkerThread } from "../jobs/WorkerThread.js"
import { type LoadFailure, loadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

const stalled = (millis: number) =>
  new Unavailable({
    error:
      `The program did not finish loading within the sandbox's safety net of ${millis} ms of wall time, before its CPU budget ran out: the server is overloaded, or the program is stuck in work the budget does not count. Try again later.`
  })

export interface CheckThreadInput {
  readonly code: string
  readonly limits: SandboxLimits
  /** Added by `startWorkerThread`, see `jobs/Heartbeat.ts`. */
  readonly heartbeat: SharedArrayBuffer
}

/**
 * Loads the program in a worker thread, which the watchdog terminates if one call outlives twice
 * its wall-clock safety net: a program's top-level code may call built-ins that QuickJS cannot
 * interrupt, and the server's event loop must not wait for them. Only the counted budget is the
 * program's verdict (422); a load the safety net or the watchdog stopped answers 503. Answers the
 * program's `parameters` export as data (undefined without one).
 */
export const checkInWorker = (
  code: string,
  limits: SandboxLimits
): Effect.Effect<unknown, ProgramInvalid | Unavailable> =>
  Effect.gen(function*() {
    const thread = yield* startWorkerThread({
      entry: "sandbox/CheckThreadEntry",
      workerData: { code, limits } satisfies Omit<CheckThreadInput, "heartbeat">,
      name: "program check thread",
      stallMillis: 2 * limits.wallMillisPerCall
    })
    const event = yield* thread.take
    switch (event._tag) {
      case "Died":
        return yield* Effect.die(event.message)
      case "Stalled":
        return yield* stalled(2 * limits.wallMillisPerCall)
      case "Message": {
        // The thread ends on its own once it has posted; the scope waits for it (see `startWorkerThread`).
        const outcome = event.message as { loaded: true; parameters: unknown } | { stalled: true } | LoadFailure
        if ("stalled" in outcome) return yield* stalled(limits.wallMillisPerCall)
        if ("overBudget" in outcome) return yield* loadFailure(outcome)
        return outcome.parameters
      }
    }
  }).pipe(Effect.scoped)
