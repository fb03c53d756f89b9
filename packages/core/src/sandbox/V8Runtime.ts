import { Effect, Layer } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import { programChecks } from "./CheckWorker.js"
import type { IsolatedVm } from "./IsolatedVm.js"
import { loadFailure } from "./LoadFailure.js"
import { makeDecider } from "./ProgramDecider.js"
import { ProgramRuntime, type RuntimeUse } from "./ProgramRuntime.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"
import { loadStepCounter } from "./StepCounting.js"
import {
  evaluateV8Program,
  handles,
  installV8Guest,
  makeV8Sandbox,
  parseFailure,
  reuseV8Guest,
  v8Driver,
  type V8Guest,
  type V8Sandbox
} from "./V8Sandbox.js"
import { makeIndicatorColumns } from "./WindowIndicators.js"

/** A run's sandbox, the guest installed in its context (once the program parsed), and the run's own handles. */
interface Slot {
  readonly sandbox: V8Sandbox
  guest: V8Guest | undefined
  readonly run: ReturnType<typeof handles>
}

/**
 * The program runtime on V8 isolates (`isolated-vm`): every run gets its own isolate with these
 * limits, disposed with the run's scope. For `oneProgram` (a search's trials), a run reuses the
 * context the run before it used when that run left the context's realm as it found it (see
 * `guest/Realm.ts`): the guest then keeps what V8 compiled for it, which a fresh context compiles
 * again for every trial. Otherwise it gets a fresh context in the same isolate. Same contract,
 * guest and answers as `QuickJsProgramRuntime`, at the speed of V8's JIT; see docs/programs.md for
 * how the two differ.
 */
export const V8ProgramRuntime = (
  ivm: IsolatedVm,
  limits: SandboxLimits = defaultSandboxLimits,
  onCall: () => void = () => {},
  use: RuntimeUse = "shared"
) => {
  const checked = { ...limits, runtime: "v8" as const }
  const watched = use === "oneProgram"
  const columns = watched ? makeIndicatorColumns() : undefined
  let kept: Slot | undefined
  const take = () => {
    const slot = kept?.sandbox.isolate.isDisposed === false ? kept : undefined
    kept = undefined
    return slot
  }
  /** The kept context if it may serve this run of a program counted on `counter`, else a fresh one (in the kept isolate). */
  const open = (counter: string | undefined, seed: number): Slot => {
    const last = watched ? take() : undefined
    if (last?.guest !== undefined && last.guest.counter === counter && reuseV8Guest(last.sandbox, last.guest, seed)) {
      return { ...last, run: handles() }
    }
    last?.sandbox.release()
    return { sandbox: makeV8Sandbox(ivm, limits, onCall, last?.sandbox.isolate), guest: undefined, run: handles() }
  }
  const close = (slot: Slot) => {
    slot.run.release()
    if (watched && kept === undefined && !slot.sandbox.isolate.isDisposed) kept = slot
    else slot.sandbox.dispose()
  }
  // The sandbox kept for the next run is disposed with the layer (a trial thread's, as the thread ends).
  const disposeKept = Effect.addFinalizer(() => Effect.sync(() => take()?.sandbox.dispose()))
  return Layer.scoped(
    ProgramRuntime,
    Effect.zipWith(disposeKept, programChecks(checked), (_, check) => ({
      check: (code: string) => check(code).pipe(withRequestSpan("ProgramRuntime.check")),
      load: (run) =>
        Effect.promise(loadStepCounter).pipe(
          Effect.flatMap((countSteps) => {
            const counted = countSteps(run.code)
            const counter = "code" in counted ? counted.counter : undefined
            return Effect.acquireRelease(Effect.sync(() => open(counter, run.seed)), (slot) =>
              Effect.sync(() => close(slot)))
              .pipe(Effect.flatMap((slot) => {
                const { sandbox } = slot
                if (!("code" in counted)) {
                  return loadFailure(parseFailure(sandbox, run.code, counted))
                }
                const guest = slot.guest ??= installV8Guest(sandbox, countSteps, counted.counter, run.seed, watched)
                const loaded = evaluateV8Program(sandbox, guest, counted.code, slot.run.own)
                return "overBudget" in loaded
                  ? loadFailure(loaded)
                  : Effect.succeed(makeDecider(v8Driver(sandbox, loaded, run, slot.run.own), run, columns))
              }))
          }),
          withRequestSpan("ProgramRuntime.load")
        )
    }))
  )
}
