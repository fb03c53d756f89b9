import { countedGuestSource } from "./GuestSource.js"
import { type IsolatedVm, type IvmIsolate, type IvmReference, keepUntilExit } from "./IsolatedVm.js"
import type { LoadFailure } from "./LoadFailure.js"
import { driverArguments, type GuestCall, type GuestDriver } from "./ProgramDecider.js"
import type { ProgramRun } from "./ProgramRuntime.js"
import { SandboxStalled } from "./Sandbox.js"
import type { SandboxLimits } from "./SandboxLimits.js"
import { overBudgetMessage, type ParseFailure, type StepCounter, stepsPerCheck } from "./StepCounting.js"

// Plain functions, without Effect: the check thread imports this module too.

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
  const contextHandles = handles()
  const context = contextHandles.own(isolate.createContextSync())
  context.evalSync(
    `for (const name of ["WebAssembly", "SharedArrayBuffer", "Atomics", "console"]) delete globalThis[name]`
  )
  /**
   * Runs `fn`, a call into the isolate given its timeout (the wall-clock safety net) and its
   * limit of steps. The guest counts the program's steps (see `StepCounting.ts`) and throws
   * `overBudgetMessage` past the limit; the net stopping the call first is the machine's verdict
   * (too busy) or work the count misses, not the program's.
   */
  const call = <A>(fn: (timeout: number, steps: number) => A): GuestCall<A> => {
    onCall()
    try {
      return { value: fn(limits.wallMillisPerCall, limits.cpuChecksPerCall * stepsPerCheck) }
    } catch (e) {
      if (isolate.isDisposed) return { overBudget: false, text: `out of memory: ${(e as Error).message}` }
      const message = (e as Error).message
      if (message === timedOut) throw new SandboxStalled(limits.wallMillisPerCall)
      if (message === overBudgetMessage) return { overBudget: true }
      return { overBudget: false, text: describeHostError(e) }
    }
  }
  /** The context's handles, released before the isolate is disposed; a run's own handles are released with the run (`handles`). */
  const release = () => contextHandles.release()
  const dispose = () => {
    release()
    try {
      if (!isolate.isDisposed) isolate.dispose()
    } catch {
      // Already disposed by its memory limit.
    }
  }
  return { ivm, isolate, limits, context, call, own: contextHandles.own, release, dispose }
}

/** Handles into an isolate (kept reachable, see `keepUntilExit`), released together. */
export const handles = () => {
  const owned: Array<{ release(): void }> = []
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
  return { own, release }
}

/** What owns a run's handles: the sandbox's context, or one run in it. */
export type Own = ReturnType<typeof handles>["own"]

export type V8Sandbox = ReturnType<typeof makeV8Sandbox>

/**
 * The guest (`GuestSource.ts`) installed in a sandbox's context, for programs whose steps count on
 * `counter`, with its `watch` and `reuse` (see `guest/Bootstrap.ts`).
 */
export interface V8Guest {
  readonly counter: string
  readonly makeDriver: IvmReference
  readonly begin: IvmReference
  readonly end: IvmReference
  readonly inspect: IvmReference
  readonly reuse: IvmReference
}

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
 * Why a program does not parse, for the author: V8's own words for an error both parsers see, the
 * step counter's parser's for one only it sees.
 */
export const parseFailure = (sandbox: V8Sandbox, code: string, failure: ParseFailure): LoadFailure => {
  try {
    sandbox.own(sandbox.isolate.compileModuleSync(code, { filename: "program.js" }))
  } catch (e) {
    return { overBudget: false, text: describeHostError(e) }
  }
  return { overBudget: false, text: failure.text }
}

/**
 * Installs the guest in the sandbox's context, seeded with `seed`; `watched`, it records the realm
 * first, so that later runs of the same program may reuse the context (see `reuseV8Guest`).
 */
export const installV8Guest = (
  sandbox: V8Sandbox,
  countSteps: StepCounter,
  counter: string,
  seed: number,
  watched: boolean
): V8Guest => {
  const { context, own } = sandbox
  const install = own(
    context.evalSync(countedGuestSource(countSteps, counter), {
      reference: true,
      filename: "bootstrap.js"
    }) as IvmReference
  )
  const installed = own(install.applySync(undefined, [seed, counter], { result: { reference: true } }) as IvmReference)
  const [makeDriver, begin, end, watch, reuse] = ["makeDriver", "begin", "end", "watch", "reuse"].map((name) =>
    own(installed.getSync(name, { reference: true }) as IvmReference)
  ) as [IvmReference, IvmReference, IvmReference, IvmReference, IvmReference]
  if (watched) watch.applySync(undefined, [])
  const inspect = own(context.evalSync(inspectSource, { reference: true }) as IvmReference)
  return { counter, makeDriver, begin, end, inspect, reuse }
}

/**
 * Whether the guest's context may serve another run of its program, seeded with `seed`: only if
 * the runs before left its realm as it was recorded (readied for the run if so).
 */
export const reuseV8Guest = (sandbox: V8Sandbox, guest: V8Guest, seed: number): boolean => {
  if (sandbox.isolate.isDisposed) return false
  try {
    return guest.reuse.applySync(undefined, [seed], { timeout: sandbox.limits.wallMillisPerCall }) === true
  } catch {
    return false
  }
}

/**
 * Evaluates the counted program in the guest's context as an ES module (imports refused) and
 * finds its `decide` and its `parameters`, all within the budget of one call; the module's handles
 * are owned by `own` (the run's, when the context serves several).
 */
export const evaluateV8Program = (
  sandbox: V8Sandbox,
  guest: V8Guest,
  code: string,
  own: Own = sandbox.own
): V8Helpers | LoadFailure => {
  const { call, context, isolate } = sandbox
  const { begin, end, inspect, makeDriver } = guest
  let decide: IvmReference | undefined
  // Evaluating the module and reading its exports are one call, bracketed by the guest's counter.
  const loaded = call((timeout, steps) => {
    begin.applySync(undefined, [steps])
    try {
      const module = own(isolate.compileModuleSync(code, { filename: "program.js" }))
      module.instantiateSync(context, (specifier) => {
        throw new Error(`SyntaxError: import of "${specifier}" is not allowed: a program has no modules to import`)
      })
      module.evaluateSync({ timeout })
      const namespace = own(module.namespace)
      const [isFunction, parameters] = inspect.applySync(undefined, [keepUntilExit(namespace.derefInto())], {
        result: { copy: true },
        timeout
      }) as [boolean, string | undefined]
      if (isFunction) decide = own(namespace.getSync("decide", { reference: true }) as IvmReference)
      return parameters
    } finally {
      // Over budget, whatever the program did with the error its last step threw.
      if (!isolate.isDisposed && end.applySync(undefined, []) === true) throw new Error(overBudgetMessage)
    }
  })
  if (!("value" in loaded)) return loaded
  if (decide === undefined) return { overBudget: false }
  return { makeDriver, decide, parameters: loaded.value === undefined ? undefined : JSON.parse(loaded.value) }
}

/** Counts, installs the guest for and evaluates a program in a fresh sandbox (see the steps above). */
export const loadV8Program = (
  sandbox: V8Sandbox,
  countSteps: StepCounter,
  code: string,
  seed: number
): V8Helpers | LoadFailure => {
  const counted = countSteps(code)
  if (!("code" in counted)) return parseFailure(sandbox, code, counted)
  return evaluateV8Program(sandbox, installV8Guest(sandbox, countSteps, counted.counter, seed, false), counted.code)
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

/** A loaded program's driver in its V8 isolate (see `makeDecider`), its handles owned by `own`. */
export const v8Driver = (
  sandbox: V8Sandbox,
  helpers: V8Helpers,
  run: ProgramRun,
  own: Own = sandbox.own
): GuestDriver => {
  const { call } = sandbox
  const driver = own(helpers.makeDriver.applySync(
    undefined,
    [keepUntilExit(helpers.decide.derefInto()), ...driverArguments(run)],
    { result: { reference: true } }
  ) as IvmReference)
  const [chunk, wanted, decide, at] = ["chunk", "wanted", "decide", "at"].map((name) =>
    own(driver.getSync(name, { reference: true }) as IvmReference)
  ) as [IvmReference, IvmReference, IvmReference, IvmReference]
  return {
    chunk: (buffer, bars, values, calls) =>
      call((timeout, steps) =>
        chunk.applySync(undefined, [steps, buffer.buffer, bars, values.buffer, calls], {
          arguments: { copy: true },
          timeout
        })
      ),
    wanted: () => call((timeout, steps) => wanted.applySync(undefined, [steps], { timeout }) as string),
    // The account, when sent, crosses as numbers: a copied buffer would double the call's cost.
    decide: (from, to, holds, account) =>
      call((timeout, steps) =>
        decide.applySync(
          undefined,
          account === undefined ? [steps, from, to, holds] : [steps, from, to, holds, ...account],
          { timeout }
        ) as number | string
      ),
    at: () => {
      if (sandbox.isolate.isDisposed) return -1
      const index = call((timeout, steps) => at.applySync(undefined, [steps], { timeout }) as number)
      return "value" in index ? index.value : -1
    }
  }
}
