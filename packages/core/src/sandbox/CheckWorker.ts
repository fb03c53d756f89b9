import { Effect } from "effect"
import type { ProgramInvalid } from "../http/Errors.js"
import { startWorkerThread } from "../jobs/WorkerThread.js"
import { type LoadFailure, loadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

export interface CheckThreadInput {
  readonly code: string
  readonly limits: SandboxLimits
  /** Added by `startWorkerThread`, see `jobs/Heartbeat.ts`. */
  readonly heartbeat: SharedArrayBuffer
}

/**
 * Loads the program in a worker thread, which the watchdog terminates if one call outlives twice
 * its wall-clock cap: a program's top-level code may call built-ins that QuickJS cannot interrupt,
 * and the server's event loop must not wait for them.
 */
export const checkInWorker = (code: string, limits: SandboxLimits): Effect.Effect<void, ProgramInvalid> =>
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
        return yield* loadFailure({ overBudget: true })
      case "Message": {
        const outcome = event.message as { loaded: true } | LoadFailure
        if ("overBudget" in outcome) return yield* loadFailure(outcome)
      }
    }
  }).pipe(Effect.scoped)
