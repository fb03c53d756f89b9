import { guestSource } from "./GuestSource.js"
import { type IsolatedVm, type IvmIsolate, type IvmReference, keepUntilExit } from "./IsolatedVm.js"
import type { LoadFailure } from "./LoadFailure.js"
import { driverArguments, type GuestCall, type GuestDriver } from "./ProgramDecider.js"
import type { ProgramRun } from "./ProgramRuntime.js"
import { SandboxStalled } from "./Sandbox.js"
import type { SandboxLimits } from "./SandboxLimits.js"

// Plain functions, without Effect: the check thread imports this module too.

/**
 * CPU time of a V8 isolate per QuickJS interrupt check of `SandboxLimits.cpuChecksPerCall`. V8
 * cannot count operations, so the budget is the isolate's own CPU time (not wall time): 100 checks
 * make 100 ms per bar, many times what V8 needs for the loops QuickJS runs in 100 checks, and
 * enough for the work V8 is slow at (a hundred thousand new keys on one object take 150 ms).
 */
export const v8MillisPerCheck = 1

/** Loading a program (its top-level code, run once and cold) has the budget of this many calls. */
export const v8LoadCalls = 10

/**
 * The most bars one call into an isolate decides (QuickJS decides up to 64): a batch the host asks
 * for is decided in calls of this many bars, each with its bars' budget. A thread inside a call
 * into an isolate cannot be terminated (Node's `worker.terminate` does not reach the nested
 * isolate), so this bounds how long a cancelled or stopped run keeps its thread: a call ends
 * within twice its budget (16 bars of 100 ms, so 3.2 s by default). The decisions are the same,
 * as the guest decides a range in any pieces alike. Each call costs about as much as a few quiet
 * bars (8 bars per call ran the bench's SMA at 0.5x plain JavaScript, 64 at 0.8x).
 */
export const v8BarsPerCall = 16

const timedOut = "Script execution timed out."

/** A V8 isolate with these limits: its heap capped at `memoryBytes`. */
export const makeV8Isolate = (ivm: IsolatedVm, limits: SandboxLimits) =>
  keepUntilExit(new ivm.Isolate({ memoryLimit: Math.max(8, Math.ceil(limits.memoryBytes / (1024 * 1024))) }))

/**
 * A fresh context without the host's or the engine's extras QuickJS lacks, in a new isolate or in
 * `isolate` (which a run before this one released). `release` frees the context and every handle
 * into it, keeping the isolate; `dispose` frees the isolate too.
 */
export const makeV8Sandbox = (
  ivm: IsolatedVm,
  limits: SandboxLimits,
  onCall: () => void,
  isolate: IvmIsolate = makeV8Isolate(ivm, limits)
) => {
  const context = keepUntilExit(isolate.createContextSync())
  context.evalSync(
    `for (const name of ["WebAssembly", "SharedArrayBuffer", "Atomics", "console"]) delete globalThis[name]`
  )
  /**
   * Runs `fn` (a call into the isolate, given its timeout) within the CPU budget of `bars` bars.
   * The isolate is stopped at twice its budget in wall time, or at the safety net if sooner; it
   * had spent its budget when it used that much CPU time, else the machine was too busy (or the
   * net too short) and the call stalled, which is not the program's verdict.
   */
  const call = <A>(bars: number, fn: (timeout: number) => A): GuestCall<A> => {
    onCall()
    const budget = bars * limits.cpuChecksPerCall * v8MillisPerCheck
    const timeout = Math.max(1, Math.ceil(Math.min(limits.wallMillisPerCall, 2 * budget)))
    const before = isolate.cpuTime
    try {
      return { value: fn(timeout) }
    } catch (e) {
      if (isolate.isDisposed) return { overBudget: false, text: `out of memory: ${(e as Error).message}` }
      if ((e as Error).message === timedOut) {
        if (Number(isolate.cpuTime - before) / 1e6 >= budget) return { overBudget: true }
        throw new SandboxStalled(timeout)
      }
      return { overBudget: false, text: describeHostError(e) }
    }
  }
  /** Handles into the isolate, released before it is disposed (and kept reachable, see `keepUntilExit`). */
  const owned: Array<{ release(): void }> = [context]
  const own = <A extends { release(): void }>(handle: A): A => (owned.push(handle), keepUntilExit(handle))
  const release = () => {
    for (const handle of owned.reverse()) {
      try {
        handle.release()
      } catch {
        // Its isolate is gone already.
      }
    }
    owned.length = 0
  }
  const dispose = () => {
    release()
    try {
      if (!isolate.isDisposed) isolate.dispose()
    } catch {
      // Already disposed by its memory limit.
    }
  }
  return { ivm, isolate, context, call, own, release, dispose }
}

export type V8Sandbox = ReturnType<typeof makeV8Sandbox>

/** The guest's functions a loaded program is driven with in V8. */
export interface V8Helpers {
  readonly makeDriver: IvmReference
  readonly decide: IvmReference
  /** The program's `parameters` export as data (undefined without one), for the host to check. */
  readonly parameters: unknown
}

/** Reads a module's exports with the JSON of before the program ran. */
const inspectSource = `(function (stringify) {
  return function (exports) {
    const parameters = exports.parameters
    return [typeof exports.decide === "function", parameters === undefined ? undefined : stringify(parameters)]
  }
})(JSON.stringify)`

/**
 * Installs the guest (`GuestSource.ts`) in the isolate, then evaluates the program as an ES module
 * (imports refused) and finds its `decide` and its `parameters`.
 */
export const loadV8Program = (sandbox: V8Sandbox, code: string, seed: number): V8Helpers | LoadFailure => {
  const { call, context, isolate, own } = sandbox
  const install = own(context.evalSync(guestSource, { reference: true, filename: "bootstrap.js" }) as IvmReference)
  const installed = own(install.applySync(undefined, [seed], { result: { reference: true } }) as IvmReference)
  const makeDriver = own(installed.getSync("makeDriver", { reference: true }) as IvmReference)
  const inspect = own(context.evalSync(inspectSource, { reference: true }) as IvmReference)
  let namespace: IvmReference
  try {
    const module = own(isolate.compileModuleSync(code, { filename: "program.js" }))
    module.instantiateSync(context, (specifier) => {
      throw new Error(`SyntaxError: import of "${specifier}" is not allowed: a program has no modules to import`)
    })
    const evaluated = call(v8LoadCalls, (timeout) => module.evaluateSync({ timeout }))
    if (!("value" in evaluated)) {
      return evaluated.overBudget
        ? { overBudget: true }
        : { overBudget: false, text: evaluated.text }
    }
    namespace = own(module.namespace)
  } catch (e) {
    if (e instanceof SandboxStalled) throw e
    return { overBudget: false, text: describeHostError(e) }
  }
  const exports = call(
    1,
    (timeout) =>
      inspect.applySync(undefined, [keepUntilExit(namespace.derefInto())], { result: { copy: true }, timeout }) as [
        boolean,
        string | undefined
      ]
  )
  if (!("value" in exports)) {
    return exports.overBudget
      ? { overBudget: true }
      : { overBudget: false, text: exports.text }
  }
  const [isFunction, parameters] = exports.value
  if (!isFunction) return { overBudget: false }
  const decide = own(namespace.getSync("decide", { reference: true }) as IvmReference)
  return { makeDriver, decide, parameters: parameters === undefined ? undefined : JSON.parse(parameters) }
}

/**
 * An error raised for the program (compiling, linking or running it) as text, with the program's
 * own frames only: isolated-vm appends the host's stack after `<isolated-vm boundary>`, which the
 * author must not see. A syntax error's message ends with its position, `[program.js:line:column]`.
 */
const describeHostError = (e: unknown): string => {
  const error = e as Error
  const frames = (error.stack ?? "").split("\n").slice(1)
  const boundary = frames.findIndex((line) => line.includes("<isolated-vm boundary>"))
  const own = (boundary === -1 ? [] : frames.slice(0, boundary)).filter((line) => line.includes("program.js"))
  return [`${error.name ?? "Error"}: ${error.message ?? String(e)}`, ...own].join("\n")
}

/** A loaded program's driver in its V8 isolate (see `makeDecider`). */
export const v8Driver = (sandbox: V8Sandbox, helpers: V8Helpers, run: ProgramRun): GuestDriver => {
  const { call, own } = sandbox
  const driver = own(helpers.makeDriver.applySync(
    undefined,
    [keepUntilExit(helpers.decide.derefInto()), ...driverArguments(run)],
    { result: { reference: true } }
  ) as IvmReference)
  const [chunk, wanted, account, decide, at] = ["chunk", "wanted", "account", "decide", "at"].map((name) =>
    own(driver.getSync(name, { reference: true }) as IvmReference)
  ) as [IvmReference, IvmReference, IvmReference, IvmReference, IvmReference]
  return {
    chunk: (buffer, bars, values, calls) =>
      call(
        1,
        (timeout) =>
          chunk.applySync(undefined, [buffer.buffer, bars, values.buffer, calls], {
            arguments: { copy: true },
            timeout
          })
      ),
    wanted: () => call(1, (timeout) => wanted.applySync(undefined, [], { timeout }) as string),
    account: (next) =>
      call(1, (timeout) => account.applySync(undefined, [next.buffer], { arguments: { copy: true }, timeout })),
    decide: (from, to, holds) => {
      for (let start = from;;) {
        const end = Math.min(to, start + v8BarsPerCall)
        const result = call(
          end - start,
          (timeout) => decide.applySync(undefined, [start, end, holds], { timeout }) as number | string
        )
        // A number short of the end is a bar that touched a band; a text is a decision or an error.
        if (end === to || !("value" in result) || result.value !== end) return result
        start = end
      }
    },
    at: () => {
      if (sandbox.isolate.isDisposed) return -1
      const index = call(1, (timeout) => at.applySync(undefined, [], { timeout }) as number)
      return "value" in index ? index.value : -1
    }
  }
}
