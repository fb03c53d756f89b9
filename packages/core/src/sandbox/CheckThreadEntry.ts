/**
 * The body of a program check thread (see `CheckWorker.ts`): loads the program in the runtime its
 * limits name (QuickJS unless V8) as a run does and posts `{ loaded: true, parameters }` (its `parameters` export as data), the `LoadFailure`, or `{ stalled: true }` when the
 * wall-clock safety net stopped it. It imports only relative paths and
 * not Effect, so the thread, which a check starts for every program saved, stays small.
 */
import { parentPort, workerData } from "node:worker_threads"
import { newQuickJSWASMModule } from "quickjs-emscripten"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import type { CheckThreadInput } from "./CheckWorker.js"
import { loadIsolatedVm } from "./IsolatedVm.js"
import type { LoadFailure } from "./LoadFailure.js"
import { loadProgram, makeSandbox, SandboxStalled } from "./Sandbox.js"
import { loadStepCounter } from "./StepCounting.js"
import { loadV8Program, makeV8Sandbox } from "./V8Sandbox.js"

const { code, heartbeat, limits } = workerData as CheckThreadInput
const { call, setBusy } = threadHeartbeat(heartbeat)

/** Loads the program, frees the engine, then posts the outcome: the thread is ended once it has posted. */
const post = (load: () => { parameters: unknown } | LoadFailure, dispose: () => unknown) => {
  let outcome: object
  try {
    const loaded = load()
    outcome = "overBudget" in loaded ? loaded : { loaded: true, parameters: loaded.parameters }
  } catch (e) {
    if (!(e instanceof SandboxStalled)) throw e
    outcome = { stalled: true }
  } finally {
    dispose()
  }
  parentPort!.postMessage(outcome)
}

setBusy(true)
const addon = limits.runtime === "v8" ? loadIsolatedVm() : undefined
if (addon !== undefined && "ivm" in addon) {
  const { ivm } = addon
  void loadStepCounter().then((countSteps) => {
    const sandbox = makeV8Sandbox(ivm, limits, call)
    post(() => loadV8Program(sandbox, countSteps, code, 0), sandbox.dispose)
  })
} else {
  void newQuickJSWASMModule().then((module) => {
    const sandbox = makeSandbox(module, limits, call)
    post(() => loadProgram(sandbox, code, 0), sandbox.dispose)
  })
}
