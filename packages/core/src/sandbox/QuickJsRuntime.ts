import { Effect, Layer } from "effect"
import { checkInWorker } from "./CheckWorker.js"
import { loadFailure } from "./LoadFailure.js"
import { makeDecider } from "./ProgramDecider.js"
import { ProgramRuntime } from "./ProgramRuntime.js"
import { loadProgram, makeSandbox, quickJsDriver } from "./Sandbox.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"

/**
 * The program runtime on QuickJS (WASM); every run gets its own instance with these limits, freed
 * with the run's scope. `onCall` runs as each call into a program starts: a heartbeat a watchdog
 * in another thread can read, since a call stuck in a built-in stops it.
 */
export const QuickJsProgramRuntime = (limits: SandboxLimits = defaultSandboxLimits, onCall: () => void = () => {}) =>
  Layer.succeed(ProgramRuntime, {
    check: (code) => checkInWorker(code, limits).pipe(Effect.withSpan("ProgramRuntime.check")),
    load: (run) =>
      Effect.acquireRelease(
        // The WASM loader is imported on first use, not when the server starts.
        Effect.promise(() => import("quickjs-emscripten").then((q) => q.newQuickJSWASMModule())).pipe(
          Effect.map((module) => makeSandbox(module, limits, onCall))
        ),
        (sandbox) => Effect.sync(sandbox.dispose)
      ).pipe(
        Effect.flatMap((sandbox) => {
          const loaded = loadProgram(sandbox, run.code, run.seed)
          return "overBudget" in loaded
            ? loadFailure(loaded)
            : Effect.succeed(makeDecider(quickJsDriver(sandbox, loaded, run), run))
        }),
        Effect.withSpan("ProgramRuntime.load")
      )
  })
