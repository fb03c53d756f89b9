import { Effect } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type { ProgramInvalid } from "../http/Errors.js"
import { type LoadFailure, loadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

// Resolved on first use: the CommonJS build has no import.meta, and the ESM one no __filename.
const quickjsPath = () =>
  createRequire(typeof __filename === "string" ? __filename : import.meta.url).resolve("quickjs-emscripten")

// Time for the thread and its WASM module to start on a loaded machine, beyond the program's own cap.
const startupMillis = 5_000

/**
 * Loads a program the way `QuickJsProgramRuntime` does (CommonJS, run in the worker) and posts
 * `{loaded: true}` or a `LoadFailure`. Nothing is disposed: the thread ends with the check.
 */
const workerSource = `
const { parentPort, workerData: { quickjs, bootstrap, code, limits } } = require("node:worker_threads")
require(quickjs).newQuickJSWASMModule().then((module) => {
  const runtime = module.newRuntime()
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  let used = 0, deadline = Infinity
  const start = () => { used = 0; deadline = Date.now() + limits.wallMillisPerCall }
  const exceeded = () => used > limits.cpuChecksPerCall || Date.now() > deadline
  runtime.setInterruptHandler(() => (++used, exceeded()))
  const vm = runtime.newContext()
  const install = vm.unwrapResult(vm.evalCode(bootstrap, "bootstrap.js"))
  const installed = vm.unwrapResult(vm.callFunction(install, vm.undefined, vm.newNumber(0)))
  start()
  const result = vm.evalCode(code, "program.js", { type: "module" })
  if (result.error) {
    if (exceeded()) return parentPort.postMessage({ overBudget: true })
    start()
    const text = vm.callFunction(vm.getProp(installed, "describe"), vm.undefined, result.error)
    return parentPort.postMessage({ overBudget: false, text: text.error ? "an error that cannot be shown" : vm.getString(text.value) })
  }
  const loaded = vm.typeof(vm.getProp(result.value, "decide")) === "function"
  parentPort.postMessage(loaded ? { loaded } : { overBudget: false })
})
`

/**
 * Loads the program in a worker thread, which is terminated if it outlives its caps: a program's
 * top-level code may call built-ins that QuickJS cannot interrupt, and the server's event loop
 * must not wait for them. The backstop timer is a real one, not the Effect clock, so it also
 * fires under a test clock.
 */
export const checkInWorker = (
  code: string,
  bootstrap: string,
  limits: SandboxLimits
): Effect.Effect<void, ProgramInvalid> =>
  Effect.async<void, ProgramInvalid>((resume) => {
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: { quickjs: quickjsPath(), bootstrap, code, limits }
    })
    const finish = (effect: Effect.Effect<void, ProgramInvalid>) => {
      clearTimeout(backstop)
      void worker.terminate()
      resume(effect)
    }
    const backstop = setTimeout(
      () => finish(Effect.fail(loadFailure({ overBudget: true }))),
      limits.wallMillisPerCall + startupMillis
    )
    worker.once("message", (message: { loaded: true } | LoadFailure) =>
      finish("loaded" in message ? Effect.void : Effect.fail(loadFailure(message))))
    worker.once("error", (error) =>
      finish(Effect.die(error)))
    return Effect.sync(() => {
      clearTimeout(backstop)
      void worker.terminate()
    })
  })
