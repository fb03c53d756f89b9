import type { QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten"
import { guestSource } from "./GuestSource.js"
import type { LoadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

// Plain functions, without Effect: the check thread (`CheckThreadEntry.ts`) imports this module,
// and stays small without Effect.

/**
 * One QuickJS instance with these limits, on its own WASM module (so nothing a run does can reach
 * another run). `dispose` frees it.
 */
export const makeSandbox = (module: QuickJSWASMModule, limits: SandboxLimits, onCall: () => void) => {
  const runtime = module.newRuntime()
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  /** The checks and wall time of the current call, which decides `bars` bars. */
  const budget = {
    used: 0,
    allowed: limits.cpuChecksPerCall,
    deadline: Infinity,
    start(bars: number) {
      onCall()
      this.used = 0
      this.allowed = bars * limits.cpuChecksPerCall
      this.deadline = Date.now() + limits.wallMillisPerCall
    },
    get exceeded() {
      return this.used > this.allowed || Date.now() > this.deadline
    }
  }
  runtime.setInterruptHandler(() => (++budget.used, budget.exceeded))
  const vm = runtime.newContext()
  const owned: Array<QuickJSHandle> = []
  const own = (handle: QuickJSHandle) => (owned.push(handle), handle)
  const dispose = () => {
    try {
      for (const handle of owned) if (handle.alive) handle.dispose()
      vm.dispose()
      runtime.dispose()
    } catch {
      // A failed disposal can only hurt this run's own WASM module, which is dropped here.
    }
  }
  return { vm, budget, own, dispose }
}

export type Sandbox = ReturnType<typeof makeSandbox>

/** An error thrown in the sandbox as text; an error thrown while describing it is not shown. */
export const describeError = ({ budget, vm }: Sandbox, describe: QuickJSHandle, error: QuickJSHandle): string => {
  budget.start(1)
  const result = vm.callFunction(describe, vm.undefined, error)
  error.dispose()
  if (result.error) {
    result.error.dispose()
    return "an error that cannot be shown"
  }
  const text = vm.getString(result.value)
  result.value.dispose()
  return text
}

/** The guest's functions a loaded program is driven with. */
export interface Helpers {
  readonly describe: QuickJSHandle
  readonly makeDriver: QuickJSHandle
  readonly decide: QuickJSHandle
}

/**
 * Installs the guest (`GuestSource.ts`) in the sandbox, then evaluates the program as an ES module
 * and finds its `decide`.
 */
export const loadProgram = (sandbox: Sandbox, code: string, seed: number): Helpers | LoadFailure => {
  const { budget, own, vm } = sandbox
  const install = own(vm.unwrapResult(vm.evalCode(guestSource, "bootstrap.js")))
  const installed = own(vm.unwrapResult(vm.callFunction(install, vm.undefined, own(vm.newNumber(seed)))))
  const describe = own(vm.getProp(installed, "describe"))
  const makeDriver = own(vm.getProp(installed, "makeDriver"))
  budget.start(1)
  const evaluated = vm.evalCode(code, "program.js", { type: "module" })
  if (evaluated.error) {
    if (budget.exceeded) {
      evaluated.error.dispose()
      return { overBudget: true }
    }
    return { overBudget: false, text: describeError(sandbox, describe, evaluated.error) }
  }
  const decide = own(vm.getProp(own(evaluated.value), "decide"))
  if (vm.typeof(decide) !== "function") return { overBudget: false }
  return { describe, makeDriver, decide }
}
