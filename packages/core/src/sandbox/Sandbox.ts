import type { QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten"
import { guestSource } from "./GuestSource.js"
import type { LoadFailure } from "./LoadFailure.js"
import { driverArguments, type GuestCall, type GuestDriver } from "./ProgramDecider.js"
import type { ProgramRun } from "./ProgramRuntime.js"
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
  /**
   * The checks of the current call and of the bar it decides, and its wall-clock safety net:
   * `exceeded` (counted) is the program's verdict; `stalled` is the machine's, or work the count
   * misses, and not the program's verdict. Each bar has the budget of one call: the handler reads
   * which bar the guest decides from its `cursor` (see `guest/Bootstrap.ts`), and tells it when
   * the call has spent a bar's budget, so that it hands back before its next bar.
   */
  const budget = {
    used: 0,
    barUsed: 0,
    bar: NaN,
    spent: false,
    deadline: Infinity,
    stalled: false,
    cursor: undefined as QuickJSHandle | undefined,
    start() {
      onCall()
      this.used = this.barUsed = 0
      this.bar = NaN
      this.spent = false
      this.deadline = Date.now() + limits.wallMillisPerCall
      this.stalled = false
    },
    get exceeded() {
      return this.barUsed > limits.cpuChecksPerCall
    },
    /** Counts a check: answers whether the call must stop, over its budget or past the net. */
    check() {
      this.used++
      if (this.cursor !== undefined) {
        const at = vm.getProp(this.cursor, "at").consume((h) => vm.getNumber(h))
        if (at !== this.bar) {
          this.bar = at
          this.barUsed = 0
        }
      }
      if (++this.barUsed > limits.cpuChecksPerCall) return true
      if (this.used > limits.cpuChecksPerCall && !this.spent && this.cursor !== undefined) {
        this.spent = true
        vm.setProp(this.cursor, "spent", vm.true)
      }
      if (Date.now() > this.deadline) this.stalled = true
      return this.stalled
    },
    /** Throws `SandboxStalled` when the safety net stopped the call (that failed with `error`, freed then). */
    throwIfStalled(error?: QuickJSHandle) {
      if (!this.stalled) return
      error?.dispose()
      throw new SandboxStalled(limits.wallMillisPerCall)
    }
  }
  runtime.setInterruptHandler(() => budget.check())
  const vm = runtime.newContext()
  const owned: Array<QuickJSHandle> = []
  const own = (handle: QuickJSHandle) => (owned.push(handle), handle)
  /** Frees the run's runtime; false when that failed, which may have hurt its WASM module: drop the module then. */
  const dispose = () => {
    try {
      for (const handle of owned) if (handle.alive) handle.dispose()
      vm.dispose()
      runtime.dispose()
      return true
    } catch {
      return false
    }
  }
  return { vm, budget, own, dispose }
}

export type Sandbox = ReturnType<typeof makeSandbox>

/**
 * A call into the sandbox ran past the wall-clock safety net before its counted budget ran out:
 * the machine was overloaded, or the program was stuck in work the count misses. Not the
 * program's verdict, so whoever runs it treats it as an infrastructure failure and may try again.
 */
export class SandboxStalled extends Error {
  constructor(readonly millis: number) {
    super(
      `A call into the program ran past the sandbox's wall-clock safety net of ${millis} ms before its CPU budget ran out (an overloaded machine, or work the budget does not count)`
    )
    this.name = "SandboxStalled"
  }
}

/** An error thrown in the sandbox as text; an error thrown while describing it is not shown. */
export const describeError = ({ budget, vm }: Sandbox, describe: QuickJSHandle, error: QuickJSHandle): string => {
  budget.start()
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
  /** The program's `parameters` export as data (undefined without one), for the host to check. */
  readonly parameters: unknown
}

/**
 * Installs the guest (`GuestSource.ts`) in the sandbox, then evaluates the program as an ES module
 * and finds its `decide` and its `parameters`.
 */
export const loadProgram = (sandbox: Sandbox, code: string, seed: number): Helpers | LoadFailure => {
  const { budget, own, vm } = sandbox
  const install = own(vm.unwrapResult(vm.evalCode(guestSource, "bootstrap.js")))
  const installed = own(vm.unwrapResult(vm.callFunction(install, vm.undefined, own(vm.newNumber(seed)))))
  const describe = own(vm.getProp(installed, "describe"))
  const makeDriver = own(vm.getProp(installed, "makeDriver"))
  budget.cursor = own(vm.getProp(installed, "cursor"))
  budget.start()
  const evaluated = vm.evalCode(code, "program.js", { type: "module" })
  if (evaluated.error) {
    budget.throwIfStalled(evaluated.error)
    if (budget.exceeded) {
      evaluated.error.dispose()
      return { overBudget: true }
    }
    return { overBudget: false, text: describeError(sandbox, describe, evaluated.error) }
  }
  const exports = own(evaluated.value)
  const decide = own(vm.getProp(exports, "decide"))
  if (vm.typeof(decide) !== "function") return { overBudget: false }
  // Copied out as JSON within the load's budget (a getter runs guest code): the declaration is
  // data, which the host decodes.
  const parameters = vm.dump(own(vm.getProp(exports, "parameters")))
  budget.throwIfStalled()
  if (budget.exceeded) return { overBudget: true }
  return { describe, makeDriver, decide, parameters }
}

/** A loaded program's driver in its QuickJS sandbox (see `makeDecider`). */
export const quickJsDriver = (sandbox: Sandbox, helpers: Helpers, run: ProgramRun): GuestDriver => {
  const { budget, own, vm } = sandbox
  const [symbols, timeframe, baseMillis, frames, params] = driverArguments(run)
  const driver = own(vm.unwrapResult(vm.callFunction(
    helpers.makeDriver,
    vm.undefined,
    helpers.decide,
    own(vm.newString(symbols)),
    own(vm.newString(timeframe)),
    own(vm.newNumber(baseMillis)),
    own(vm.newString(frames)),
    own(vm.newString(params))
  )))
  const [chunk, wanted, decide, at] = ["chunk", "wanted", "decide", "at"].map((name) =>
    own(vm.getProp(driver, name))
  ) as [QuickJSHandle, QuickJSHandle, QuickJSHandle, QuickJSHandle]
  /** Calls a function of the driver (with a bar's budget for each bar it decides), and answers its value as `read` reads it. */
  const call = <A>(
    fn: QuickJSHandle,
    read: (value: QuickJSHandle) => A,
    args: Array<QuickJSHandle>
  ): GuestCall<A> => {
    budget.start()
    const result = vm.callFunction(fn, vm.undefined, ...args)
    for (const handle of args) handle.dispose()
    if (result.error) {
      budget.throwIfStalled(result.error)
      if (budget.exceeded) {
        result.error.dispose()
        return { overBudget: true }
      }
      return { overBudget: false, text: describeError(sandbox, helpers.describe, result.error) }
    }
    const value = read(result.value)
    result.value.dispose()
    return { value }
  }
  const ignore = () => undefined
  return {
    chunk: (buffer, bars, values, calls) =>
      call(chunk, ignore, [
        vm.newArrayBuffer(buffer.buffer),
        vm.newNumber(bars),
        vm.newArrayBuffer(values.buffer),
        vm.newString(calls)
      ]),
    wanted: () => call(wanted, (value) => vm.getString(value), []),
    // A number is where the run stopped without a decision; a decision's text reads as NaN.
    decide: (from, to, holds, account) =>
      call(decide, (value) => {
        const stopped = vm.getNumber(value)
        return Number.isNaN(stopped) ? vm.getString(value) : stopped
      }, [
        vm.newNumber(from),
        vm.newNumber(to),
        holds ? vm.true : vm.false,
        account === undefined ? vm.undefined : vm.newArrayBuffer(account.buffer)
      ]),
    at: () => {
      const index = call(at, (value) => vm.getNumber(value), [])
      return "value" in index ? index.value : -1
    }
  }
}
