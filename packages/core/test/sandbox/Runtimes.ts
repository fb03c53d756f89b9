import { it } from "@effect/vitest"
import type { Layer } from "effect"
import { loadIsolatedVm } from "../../src/sandbox/IsolatedVm.js"
import type { ProgramRuntime, RuntimeUse } from "../../src/sandbox/ProgramRuntime.js"
import { QuickJsProgramRuntime } from "../../src/sandbox/QuickJsRuntime.js"
import type { SandboxLimits, SandboxRuntimeName } from "../../src/sandbox/SandboxLimits.js"
import { V8ProgramRuntime } from "../../src/sandbox/V8Runtime.js"

/** A program runtime the sandbox suites run against, by name. */
export interface RuntimeCase {
  readonly name: string
  /** What `SandboxLimits.runtime` calls it: the limits threads get name the runtime they run. */
  readonly runtime: SandboxRuntimeName
  readonly layer: (limits?: SandboxLimits, use?: RuntimeUse) => Layer.Layer<ProgramRuntime>
}

const addon = loadIsolatedVm()

/**
 * Both runtimes, for `describe.each`: every suite holds each to the same answers and walls. V8
 * is left out where `isolated-vm` does not load (no compiler at install, or node started without
 * `--no-node-snapshot`); `v8Unavailable` then says why, as a skipped test.
 */
export const runtimes: ReadonlyArray<RuntimeCase> = [
  {
    name: "QuickJS",
    runtime: "quickjs",
    layer: (limits, use) => QuickJsProgramRuntime(limits, undefined, use)
  },
  ...("ivm" in addon ?
    [{
      name: "V8",
      runtime: "v8" as const,
      layer: (limits?: SandboxLimits, use?: RuntimeUse) => V8ProgramRuntime(addon.ivm, limits, undefined, use)
    }] :
    [])
]

/** A skipped test naming why the V8 runtime is not tested here, if it is not. */
export const reportV8Unavailable = () => {
  if ("reason" in addon) it.skip(`the V8 runtime is not tested here: ${addon.reason}`, () => {})
}
