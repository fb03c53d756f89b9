import type { Layer } from "effect"
import type { ProgramRuntime } from "./ProgramRuntime.js"
import { QuickJsProgramRuntime } from "./QuickJsRuntime.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"

/**
 * The program runtime every run uses (validation, backtest, live-decision and research threads),
 * under these limits; `onCall` runs as each call into a program starts (a heartbeat, see
 * `QuickJsProgramRuntime`).
 */
export const selectedProgramRuntime = (
  limits: SandboxLimits = defaultSandboxLimits,
  onCall: () => void = () => {}
): Layer.Layer<ProgramRuntime> => QuickJsProgramRuntime(limits, onCall)
