/**
 * The body of a program check thread (see `CheckWorker.ts`): loads each program it is sent in the
 * runtime its limits name (QuickJS unless V8) as a run does, one at a time, and posts `{ loaded:
 * true, parameters }` (its `parameters` export as data), the `LoadFailure`, or `{ stalled: true }`
 * when the wall-clock safety net stopped it. The engine is loaded once; each program gets a fresh
 * sandbox, freed before the answer is posted. It imports only relative paths and not Effect, so
 * the thread stays small.
 */
import { parentPort, workerData } from "node:worker_threads"
import { newQuickJSWASMModule } from "quickjs-emscripten"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { onThreadMessages } from "../jobs/ThreadEnd.js"
import type { CheckThreadInput } from "./CheckWorker.js"
import { loadIsolatedVm } from "./IsolatedVm.js"
import type { LoadFailure } from "./LoadFailure.js"
import { loadProgram, makeSandbox, SandboxStalled } from "./Sandbox.js"
import { loadStepCounter } from "./StepCounting.js"
import { loadV8Program, makeV8Sandbox } from "./V8Sandbox.js"

const port = parentPort!
const { heartbeat, limits } = workerData as CheckThreadInput
const { call, setBusy } = threadHeartbeat(heartbeat)

/** Loads a program, frees its sandbox, then posts the outcome. */
const post = (load: () => { parameters: unknown } | LoadFailure, dispose: () => unknown) => {
  let outcome: object
  setBusy(true)
  try {
    const loaded = load()
    outcome = "overBudget" in loaded ? loaded : { loaded: true, parameters: loaded.parameters }
  } catch (e) {
    if (!(e instanceof SandboxStalled)) throw e
    outcome = { stalled: true }
  } finally {
    dispose()
    setBusy(false)
  }
  port.postMessage(outcome)
}

const addon = limits.runtime === "v8" ? loadIsolatedVm() : undefined
const check: Promise<(code: string) => void> = addon !== undefined && "ivm" in addon
  ? loadStepCounter().then((countSteps) => (code) => {
    const sandbox = makeV8Sandbox(addon.ivm, limits, call)
    post(() => loadV8Program(sandbox, countSteps, code, 0), sandbox.dispose)
  })
  : newQuickJSWASMModule().then((module) => (code) => {
    const sandbox = makeSandbox(module, limits, call)
    post(() => loadProgram(sandbox, code, 0), sandbox.dispose)
  })

onThreadMessages(port, (message: { readonly code: string }) => void check.then((load) => load(message.code)))
