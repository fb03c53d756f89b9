import { Effect, Layer } from "effect"
import type { QuickJSWASMModule } from "quickjs-emscripten"
import { withRequestSpan } from "../http/RequestSpan.js"
import { programChecks } from "./CheckWorker.js"
import { loadFailure } from "./LoadFailure.js"
import { makeDecider } from "./ProgramDecider.js"
import { ProgramRuntime, type RuntimeUse } from "./ProgramRuntime.js"
import { loadProgram, makeSandbox, quickJsDriver } from "./Sandbox.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"
import { makeIndicatorColumns } from "./WindowIndicators.js"

/**
 * The program runtime on QuickJS (WASM); every run gets its own instance with these limits, freed
 * with the run's scope, or, for `oneProgram`, its own QuickJS runtime in the instance the run
 * before it used (dropped if a run's disposal failed). `onCall` runs as each call into a program
 * starts: a heartbeat a watchdog in another thread can read, since a call stuck in a built-in stops it.
 */
export const QuickJsProgramRuntime = (
  limits: SandboxLimits = defaultSandboxLimits,
  onCall: () => void = () => {},
  use: RuntimeUse = "shared"
) => {
  // The WASM loader is imported on first use, not when the server starts.
  const newModule = () => import("quickjs-emscripten").then((q) => q.newQuickJSWASMModule())
  let kept: Promise<QuickJSWASMModule> | undefined
  const module = () => use === "shared" ? newModule() : (kept ??= newModule())
  const columns = use === "oneProgram" ? makeIndicatorColumns() : undefined
  return Layer.scoped(
    ProgramRuntime,
    Effect.map(programChecks(limits), (check) => ({
      check: (code) => check(code).pipe(withRequestSpan("ProgramRuntime.check")),
      load: (run) =>
        Effect.acquireRelease(
          Effect.promise(module).pipe(Effect.map((m) => makeSandbox(m, limits, onCall))),
          (sandbox) =>
            Effect.sync(() => {
              if (!sandbox.dispose()) kept = undefined
            })
        ).pipe(
          Effect.flatMap((sandbox) => {
            const loaded = loadProgram(sandbox, run.code, run.seed)
            return "overBudget" in loaded
              ? loadFailure(loaded)
              : Effect.succeed(makeDecider(quickJsDriver(sandbox, loaded, run), run, columns))
          }),
          withRequestSpan("ProgramRuntime.load")
        )
    }))
  )
}
