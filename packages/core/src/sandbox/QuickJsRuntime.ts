import { Effect, Either, Layer, ParseResult, Schema } from "effect"
import { newQuickJSWASMModule, type QuickJSHandle } from "quickjs-emscripten"
import type { Decide } from "../backtests/BacktestEngine.js"
import { checkInWorker } from "./CheckWorker.js"
import { Decision, hold, ProgramRunError } from "./Decision.js"
import { firstLine, loadFailure } from "./LoadFailure.js"
import { ProgramRuntime, type ProgramRun } from "./ProgramRuntime.js"
import { taSource } from "./TaSource.js"

/** The caps on one program run in QuickJS. */
export interface SandboxLimits {
  /** Heap of one run, in bytes. */
  readonly memoryBytes: number
  /** Stack of one run, in bytes: deep recursion fails cleanly before the host's stack does. */
  readonly stackBytes: number
  /**
   * CPU budget of one call into the program, counted in QuickJS interrupt checks (one about every
   * 10 000 operations, a fraction of a millisecond). Counting operations instead of wall time keeps
   * a run's outcome the same on any machine and under any load.
   */
  readonly cpuChecksPerCall: number
  /**
   * Wall-clock cap of one call, the safety net for work QuickJS counts as one operation (a large
   * built-in call); it is checked with the budget, so it may be overrun until the next check.
   */
  readonly wallMillisPerCall: number
}

/** 32 MiB heap, 256 KiB stack, 100 interrupt checks and 1 s per call. */
export const defaultSandboxLimits: SandboxLimits = {
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  cpuChecksPerCall: 100,
  wallMillisPerCall: 1000
}

/** The most candles `data.candles` holds. */
export const candleWindow = 500

/**
 * Runs once in each sandbox, before the program: seeds `Math.random`, replaces the clock with the
 * current bar's time, installs `ta`, and answers `describe` (an error as one line of text) and
 * `makeStep` (the per-bar entry point). Candles stay inside the sandbox, so each call carries one
 * bar as plain numbers and answers 0 for "hold", "!message" for a throw, or the decision as JSON.
 */
/**
 * QuickJS checks its interrupt handler only every so many loop iterations and calls, and a built-in
 * counts as one step however much it does, so a loop of large built-in calls (filling or joining
 * big arrays) could run for minutes between two checks. Built-ins whose work grows with the size
 * of their receiver (or, for repeat and the pads, of their count) are therefore charged first
 * with an empty loop of one iteration per 1024 elements, which the CPU budget sees.
 */
const meteringSource = `
  const charge = (n) => { for (let i = n >>> 10; i > 0; i--); }
  const constantTime = new Set(["constructor", "push", "pop", "at", "charAt", "charCodeAt", "codePointAt"])
  const byCount = new Set(["repeat", "padStart", "padEnd"])
  const meter = (owner, name, size) => {
    const real = owner[name]
    Object.defineProperty(owner, name, {
      value: { [name](...args) { charge(size(this, args)); return real.apply(this, args) } }[name],
      writable: true,
      configurable: true
    })
  }
  const length = (x) => (x == null ? 0 : +x.length || 0)
  for (const proto of [Array.prototype, String.prototype, Object.getPrototypeOf(Uint8Array.prototype)]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (constantTime.has(name) || typeof Object.getOwnPropertyDescriptor(proto, name).value !== "function") continue
      meter(proto, name, byCount.has(name) ? (self, args) => length(self) * Math.max(1, +args[0] || 0) : length)
    }
  }
  meter(Array, "from", (_, args) => length(args[0]))
  meter(JSON, "parse", (_, args) => length(args[0]))
  meter(JSON, "stringify", (_, args) => length(args[0]))
`

const bootstrap = `(function (seed) {
  "use strict"
  // The driver's own calls use the unmetered built-ins.
  const shift = Array.prototype.shift, stringify = JSON.stringify
  ${meteringSource}
  let state = seed >>> 0
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  let now = 0
  const RealDate = Date
  function SandboxDate(...args) {
    if (new.target === undefined) return new RealDate(now).toString()
    return args.length === 0 ? new RealDate(now) : new RealDate(...args)
  }
  SandboxDate.prototype = RealDate.prototype
  SandboxDate.now = () => now
  SandboxDate.parse = RealDate.parse
  SandboxDate.UTC = RealDate.UTC
  Object.defineProperty(RealDate.prototype, "constructor", { value: SandboxDate })
  globalThis.Date = SandboxDate
  ${taSource}
  Object.defineProperty(globalThis, "ta", { value: ta })
  const describe = (e) => {
    try {
      const text = e instanceof Error ? e.name + ": " + e.message + "\\n" + e.stack : String(e)
      return text.slice(0, 1000)
    } catch {
      return "a value that cannot be shown"
    }
  }
  const makeStep = (decide, symbol, timeframe, paramsJson) => {
    const candles = []
    const data = { symbol, timeframe, bar: null, candles, position: null, balance: 0, equity: 0, params: JSON.parse(paramsJson) }
    let side = 0, size = 0, entry = 0
    // The account changes only on fills, so the host sends it only then; equity follows each close.
    const account = (s, z, e, leverage, balance) => {
      side = s; size = z; entry = e
      data.position = s === 0 ? null : { side: s > 0 ? "long" : "short", size: z, entry_price: e, leverage }
      data.balance = balance
    }
    const step = (time, open, high, low, close, volume) => {
      now = time
      const bar = { time, open, high, low, close, volume }
      candles.push(bar)
      if (candles.length > ${candleWindow}) shift.call(candles)
      data.bar = bar
      data.equity = side === 0 ? data.balance : data.balance + side * size * (close - entry)
      try {
        const d = decide(data)
        if (d !== null && typeof d === "object" && d.operation === "hold") return 0
        return stringify(d) ?? "undefined"
      } catch (e) {
        return "!" + describe(e)
      }
    }
    return { account, step }
  }
  return { describe, makeStep }
})`

const exhausted = /out of memory|stack overflow|string too long/

const decodeDecision = Schema.decodeUnknownEither(Schema.parseJson(Decision))

/** One QuickJS instance: its own WASM module, so nothing a run does can reach another run. */
const openSandbox = (limits: SandboxLimits, onCall: () => void) =>
  Effect.acquireRelease(
    Effect.promise(() => newQuickJSWASMModule()).pipe(Effect.map((module) => {
      const runtime = module.newRuntime()
      runtime.setMemoryLimit(limits.memoryBytes)
      runtime.setMaxStackSize(limits.stackBytes)
      const budget = {
        used: 0,
        deadline: Infinity,
        start() {
          onCall()
          this.used = 0
          this.deadline = Date.now() + limits.wallMillisPerCall
        },
        get exceeded() {
          return this.used > limits.cpuChecksPerCall || Date.now() > this.deadline
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

type Sandbox = Effect.Effect.Success<ReturnType<typeof openSandbox>>

/** An error thrown in the sandbox as text; an error thrown while describing it is not shown. */
const describeError = ({ budget, vm }: Sandbox, describe: QuickJSHandle, error: QuickJSHandle): string => {
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

/** The per-bar entry point of a loaded program, as the engine's `Decide`. */
const makeDecide = (sandbox: Sandbox, helpers: Helpers, run: ProgramRun): Decide => {
  const { budget, own, vm } = sandbox
  const entry = own(vm.unwrapResult(vm.callFunction(
    helpers.makeStep,
    vm.undefined,
    helpers.decide,
    own(vm.newString(run.symbol)),
    own(vm.newString(run.timeframe)),
    own(vm.newString(JSON.stringify(run.params ?? {})))
  )))
  const step = own(vm.getProp(entry, "step"))
  const setAccount = own(vm.getProp(entry, "account"))
  const call = (fn: QuickJSHandle, values: ReadonlyArray<number>) => {
    const args = values.map((n) => vm.newNumber(n))
    budget.start()
    const result = vm.callFunction(fn, vm.undefined, ...args)
    for (const handle of args) handle.dispose()
    return result
  }
  let sent: ReadonlyArray<number> = []
  return (bar, account) => {
    const fail = (reason: ProgramRunError["reason"], message: string): never => {
      throw new ProgramRunError({ reason, message, time: bar.time })
    }
    const p = account.position
    const state = [p === null ? 0 : p.side === "long" ? 1 : -1, p?.size ?? 0, p?.entry_price ?? 0, p?.leverage ?? 0, account.balance]
    if (state.some((value, i) => value !== sent[i])) {
      vm.unwrapResult(call(setAccount, state)).dispose()
      sent = state
    }
    const result = call(step, [bar.time, bar.open, bar.high, bar.low, bar.close, bar.volume])
    if (result.error) {
      // Only an interrupt or an exhausted heap escapes the step's own try/catch.
      if (budget.exceeded) {
        result.error.dispose()
        return fail("cpu_budget_exceeded", "decide exceeded its CPU budget")
      }
      return fail("memory_exceeded", `decide exhausted its memory: ${firstLine(describeError(sandbox, helpers.describe, result.error))}`)
    }
    if (vm.typeof(result.value) === "number") {
      result.value.dispose()
      return hold
    }
    const text = vm.getString(result.value)
    result.value.dispose()
    if (text.startsWith("!")) {
      return fail(exhausted.test(text) ? "memory_exceeded" : "threw", `decide threw ${firstLine(text.slice(1))}`)
    }
    return Either.getOrElse(decodeDecision(text), (e) =>
      fail("invalid_decision", `decide returned an invalid decision: ${ParseResult.TreeFormatter.formatErrorSync(e).slice(0, 500)}`))
  }
}

interface Helpers {
  readonly describe: QuickJSHandle
  readonly makeStep: QuickJSHandle
  readonly decide: QuickJSHandle
}

const make = (limits: SandboxLimits, onCall: () => void): typeof ProgramRuntime.Service => {
  /** Installs the bootstrap, then evaluates the program as an ES module and finds its `decide`. */
  const open = (code: string, seed: number) =>
    Effect.gen(function*() {
      const sandbox = yield* openSandbox(limits, onCall)
      const { budget, own, vm } = sandbox
      const install = own(vm.unwrapResult(vm.evalCode(bootstrap, "bootstrap.js")))
      const installed = own(vm.unwrapResult(vm.callFunction(install, vm.undefined, own(vm.newNumber(seed)))))
      const describe = own(vm.getProp(installed, "describe"))
      const makeStep = own(vm.getProp(installed, "makeStep"))
      budget.start()
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
      return { sandbox, helpers: { describe, makeStep, decide } satisfies Helpers }
    })

  return {
    check: (code) => checkInWorker(code, bootstrap, limits).pipe(Effect.withSpan("ProgramRuntime.check")),
    load: (run) =>
      Effect.map(open(run.code, run.seed), ({ helpers, sandbox }) => makeDecide(sandbox, helpers, run)).pipe(
        Effect.withSpan("ProgramRuntime.load")
      )
  }
}

/**
 * The program runtime on QuickJS (WASM); every run gets its own instance with these limits.
 * `onCall` runs as each call into a program starts: a heartbeat a watchdog in another thread can
 * read, since a call stuck in a built-in stops it.
 */
export const QuickJsProgramRuntime = (limits: SandboxLimits = defaultSandboxLimits, onCall: () => void = () => {}) =>
  Layer.succeed(ProgramRuntime, make(limits, onCall))
