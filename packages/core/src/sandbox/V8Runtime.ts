import { Effect, Layer } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import { checkInWorker } from "./CheckWorker.js"
import type { IsolatedVm, IvmIsolate } from "./IsolatedVm.js"
import { loadFailure } from "./LoadFailure.js"
import { makeDecider } from "./ProgramDecider.js"
import { ProgramRuntime, type RuntimeUse } from "./ProgramRuntime.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"
import { loadStepCounter } from "./StepCounting.js"
import { loadV8Program, makeV8Sandbox, v8Driver } from "./V8Sandbox.js"

/**
 * The program runtime on V8 isolates (`isolated-vm`): every run gets its own isolate with these
 * limits, disposed with the run's scope, or, for `oneProgram`, a fresh context in the isolate the
 * run before it released. Same contract, guest and answers as `QuickJsProgramRuntime`, at the
 * speed of V8's JIT; see docs/programs.md for how the two differ.
 */
export const V8ProgramRuntime = (
  ivm: IsolatedVm,
  limits: SandboxLimits = defaultSandboxLimits,
  onCall: () => void = () => {},
  use: RuntimeUse = "shared"
) => {
  const checked = { ...limits, runtime: "v8" as const }
  let kept: IvmIsolate | undefined
  const take = () => {
    const isolate = kept?.isDisposed === false ? kept : undefined
    kept = undefined
    return isolate
  }
  // The isolate kept for the next run is disposed with the layer (a trial thread's, as the thread ends).
  const disposeKept = Effect.addFinalizer(() => Effect.sync(() => take()?.dispose()))
  return Layer.scoped(
    ProgramRuntime,
    Effect.as(disposeKept, {
      check: (code) => checkInWorker(code, checked).pipe(withRequestSpan("ProgramRuntime.check")),
      load: (run) =>
        Effect.acquireRelease(
          Effect.sync(() => makeV8Sandbox(ivm, limits, onCall, use === "oneProgram" ? take() : undefined)),
          (sandbox) =>
            Effect.sync(() => {
              if (use === "oneProgram" && kept === undefined && !sandbox.isolate.isDisposed) {
                sandbox.release()
                kept = sandbox.isolate
              } else {
                sandbox.dispose()
              }
            })
        ).pipe(
          Effect.zip(Effect.promise(loadStepCounter)),
          Effect.flatMap(([sandbox, countSteps]) => {
            const loaded = loadV8Program(sandbox, countSteps, run.code, run.seed)
            return "overBudget" in loaded
              ? loadFailure(loaded)
              : Effect.succeed(makeDecider(v8Driver(sandbox, loaded, run), run))
          }),
          withRequestSpan("ProgramRuntime.load")
        )
    })
  )
}
