import type { Layer } from "effect"
import { isMainThread } from "node:worker_threads"
import { loadIsolatedVm } from "./IsolatedVm.js"
import type { ProgramRuntime, RuntimeUse } from "./ProgramRuntime.js"
import { QuickJsProgramRuntime } from "./QuickJsRuntime.js"
import { defaultSandboxLimits, type SandboxLimits, type SandboxRuntimeName } from "./SandboxLimits.js"
import { V8ProgramRuntime } from "./V8Runtime.js"

let warned = false

/**
 * The runtime `limits.runtime` names, V8 when it names none: V8 only where `isolated-vm` loads
 * and an isolate can be made, else QuickJS with one warning (from the main thread: threads get
 * the main thread's choice with their limits, and fall back silently).
 */
export const resolveSandboxRuntime = (limits: SandboxLimits): SandboxRuntimeName => {
  if (limits.runtime === "quickjs") return "quickjs"
  const addon = loadIsolatedVm()
  if ("ivm" in addon) return "v8"
  if (isMainThread && !warned) {
    warned = true
    process.emitWarning(`Programs run in QuickJS, not in V8 isolates: ${addon.reason}.`, "SandboxRuntimeWarning")
  }
  return "quickjs"
}

/**
 * The program runtime every run uses (validation, backtest, live-decision and research threads),
 * under these limits: the one `resolveSandboxRuntime` picks (V8, or QuickJS where it must), which it also passes on in the
 * limits, so the threads it starts (program checks) use it too. `onCall` runs as each call into
 * a program starts (a heartbeat, see `QuickJsProgramRuntime`); `use` says whose runs it serves.
 */
export const selectedProgramRuntime = (
  limits: SandboxLimits = defaultSandboxLimits,
  onCall: () => void = () => {},
  use: RuntimeUse = "shared"
): Layer.Layer<ProgramRuntime> => {
  const runtime = resolveSandboxRuntime(limits)
  // The addon is loaded (and an isolate made to probe it) only when V8 is asked for.
  const addon = runtime === "v8" ? loadIsolatedVm() : undefined
  return addon !== undefined && "ivm" in addon
    ? V8ProgramRuntime(addon.ivm, { ...limits, runtime }, onCall, use)
    : QuickJsProgramRuntime({ ...limits, runtime }, onCall, use)
}
