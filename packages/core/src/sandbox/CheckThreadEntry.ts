/**
 * The body of a program check thread (see `CheckWorker.ts`): loads the program in the runtime its
 * limits name (QuickJS unless V8) as a run does and posts `{ loaded: true, parameters }` (its `parameters` export as data), the `LoadFailure`, or `{ stalled: true }` when the
 * wall-clock safety net stopped it. It imports only relative paths and
 * not Effect, so the thread, which a check starts for every program saved, stays small. Nothing is
 * disposed: the thread ends with the check.
 */
import { parentPort, workerData } from "node:worker_threads"
import { newQuickJSWASMModule } from "quickjs-emscripten"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import type { CheckThreadInput } from "./CheckWorker.js"
import { loadIsolatedVm } from "./IsolatedVm.js"
import type { LoadFailure } from "./LoadFailure.js"
import { loadProgram, makeSandbox, SandboxStalled } from "./Sandbox.js"
import { loadV8Program, makeV8Sandbox } from "./V8Sandbox.js"

const { code, heartbeat, limits } = workerData as CheckThreadInput
const { call, setBusy } = threadHeartbeat(heartbeat)

const post = (load: () => { parameters: unknown } | LoadFailure) => {
  try {
    const loaded = load()
    parentPort!.postMessage("overBudget" in loaded ? loaded : { loaded: true, parameters: loaded.parameters })
  } catch (e) {
    if (!(e instanceof SandboxStalled)) throw e
    parentPort!.postMessage({ stalled: true })
  }
}

setBusy(true)
const addon = limits.runtime === "v8" ? loadIsolatedVm() : undefined
if (addon !== undefined && "ivm" in addon) {
  post(() => loadV8Program(makeV8Sandbox(addon.ivm, limits, call), code, 0))
} else {
  void newQuickJSWASMModule().then((module) => post(() => loadProgram(makeSandbox(module, limits, call), code, 0)))
}
