import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { ProgramRuntime } from "./ProgramRuntime.js"
import { selectedProgramRuntime } from "./SelectedRuntime.js"

export { ProgramRuntime }

/** Programs run in QuickJS under the configured limits (backtest threads build their own runtime from the same limits). */
export const SandboxLive = Layer.unwrapEffect(
  Effect.map(PlatformConfig, ({ sandbox }) => selectedProgramRuntime(sandbox))
)
