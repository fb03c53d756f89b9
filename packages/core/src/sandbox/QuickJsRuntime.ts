import { Effect, Layer } from "effect"
import { checkInWorker } from "./CheckWorker.js"
import { makeDecider } from "./ProgramDecider.js"
import { ProgramRuntime } from "./ProgramRuntime.js"
import { loadInSandbox } from "./Sandbox.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"

/**
 * The program runtime on QuickJS (WASM); every run gets its own instance with these limits.
 * `onCall` runs as each call into a program starts: a heartbeat a watchdog in another thread can
 * read, since a call stuck in a built-in stops it.
 */
export const QuickJsProgramRuntime = (limits: SandboxLimits = defaultSandboxLimits, onCall: () => void = () => {}) =>
  Layer.succeed(ProgramRuntime, {
    check: (code) => checkInWorker(code, limits).pipe(Effect.withSpan("ProgramRuntime.check")),
    load: (run) =>
      Effect.map(
        loadInSandbox(limits, onCall, run.code, run.seed),
        ({ helpers, sandbox }) => makeDecider(sandbox, helpers, run)
      ).pipe(Effect.withSpan("ProgramRuntime.load"))
  })
