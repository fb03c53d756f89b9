import { Effect } from "effect"
import { newQuickJSWASMModule, type QuickJSHandle } from "quickjs-emscripten"
import { guestSource } from "./GuestSource.js"
import { loadFailure } from "./LoadFailure.js"
import type { SandboxLimits } from "./SandboxLimits.js"

/** One QuickJS instance: its own WASM module, so nothing a run does can reach another run. */
export const openSandbox = (limits: SandboxLimits, onCall: () => void) =>
  Effect.acquireRelease(
    Effect.promise(() => newQuickJSWASMModule()).pipe(Effect.map((module) => {
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
      return { runtime, vm, budget, own, owned }
    })),
    ({ owned, runtime, vm }) =>
      Effect.sync(() => {
        try {
          for (const handle of owned) if (handle.alive) handle.dispose()
          vm.dispose()
          runtime.dispose()
        } catch {
          // A failed disposal can only hurt this run's own WASM module, which is dropped here.
        }
      })
  )

export type Sandbox = Effect.Effect.Success<ReturnType<typeof openSandbox>>

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
 * Opens a sandbox in the scope, installs the guest (`GuestSource.ts`), then evaluates the program
 * as an ES module and finds its `decide`.
 */
export const loadInSandbox = (limits: SandboxLimits, onCall: () => void, code: string, seed: number) =>
  Effect.gen(function*() {
    const sandbox = yield* openSandbox(limits, onCall)
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
        return yield* loadFailure({ overBudget: true })
      }
      return yield* loadFailure({ overBudget: false, text: describeError(sandbox, describe, evaluated.error) })
    }
    const decide = own(vm.getProp(own(evaluated.value), "decide"))
    if (vm.typeof(decide) !== "function") return yield* loadFailure({ overBudget: false })
    return { sandbox, helpers: { describe, makeDriver, decide } satisfies Helpers }
  })
