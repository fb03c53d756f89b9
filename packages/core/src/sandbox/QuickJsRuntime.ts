import { Effect, Either, Layer, Schema } from "effect"
import type { QuickJSHandle } from "quickjs-emscripten"
import { parseErrorIssues, summarizeIssues } from "../http/DecodeFailure.js"
import type { Candle } from "../venues/Venue.js"
import { checkInWorker } from "./CheckWorker.js"
import type { Decider } from "./Decider.js"
import { Decision, ProgramRunError } from "./Decision.js"
import { firstLine, loadFailure } from "./LoadFailure.js"
import { type ProgramRun, ProgramRuntime } from "./ProgramRuntime.js"
import { defaultSandboxLimits, type SandboxLimits } from "./SandboxLimits.js"
import { taSource } from "./TaSource.js"
import { makeWindowIndicators, windowIndicatorsSource } from "./WindowIndicators.js"

/** The most candles `data.candles` holds. */
export const candleWindow = 500

/**
 * The most bars that cross into the sandbox at once: the engine's chunk (a whole stream chunk,
 * possibly large) goes in pieces, so the buffers copied into the sandbox's WASM memory, which
 * never shrinks, stay small. A run's first pieces are smaller (from `firstPiece` bars, doubling),
 * because the host computes the indicator calls a program makes only from the piece after the one
 * where it first makes them.
 */
const barsPerPiece = 1024
const firstPiece = 64

/**
 * The most bars one call into the sandbox decides. Crossing into the sandbox costs about as much
 * as deciding a bar, so quiet bars are decided in batches; the cap bounds how far one bar can
 * overrun its CPU budget on its neighbours' share.
 */
const barsPerCall = 64

/** Numbers per bar in the buffer a chunk crosses into the sandbox as. */
const barFields = 6

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

/**
 * Runs once in each sandbox, before the program: seeds `Math.random`, replaces the clock with the
 * current bar's time, installs `ta`, and answers `describe` (an error as one line of text) and
 * `makeDriver`, which the host drives: `chunk` takes the next piece of bars as a buffer of
 * `barFields` Float64 columns, their count, and the host's indicator values for them (see
 * WindowIndicators.ts); `wanted` answers the indicator calls the host should compute from the next
 * piece on; `account` takes the position, balance and exit band after a fill; and `decide` runs
 * the program over the bars as `Decider.decide` does. It answers the index where it stopped
 * without a decision, or `"<index>:<decision as JSON>"`, or `"<index>:!<message>"` when the
 * program threw; `at` answers the bar being decided (-1 before the piece's first).
 */
const bootstrap = `(function (seed) {
  "use strict"
  // The driver's own calls use the unmetered built-ins.
  const shift = Array.prototype.shift, stringify = JSON.stringify, parse = JSON.parse, Float64 = Float64Array
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
  // The window of candles the driver keeps, and the index in the chunk of the bar it decides.
  const candles = []
  let at = -1
  ${windowIndicatorsSource}
  Object.defineProperty(globalThis, "ta", { value: windowTa })
  const describe = (e) => {
    try {
      const text = e instanceof Error ? e.name + ": " + e.message + "\\n" + e.stack : String(e)
      return text.slice(0, 1000)
    } catch {
      return "a value that cannot be shown"
    }
  }
  const makeDriver = (decide, symbol, timeframe, paramsJson) => {
    const data = { symbol, timeframe, bar: null, candles, position: null, balance: 0, equity: 0, params: parse(paramsJson) }
    let count = 0, times, opens, highs, lows, closes, volumes, side = 0, size = 0, entry = 0, balance = 0, floor = 0, ceiling = 0
    const chunk = (buffer, bars, values, calls) => {
      // Every bar of the last chunk must have been appended, for the window to stay the host's.
      if (at + 1 !== count) windowOutOfOrder()
      count = bars
      const column = (f) => new Float64(buffer, f * count * 8, count)
      times = column(0); opens = column(1); highs = column(2); lows = column(3); closes = column(4); volumes = column(5)
      at = -1
      installWindow(values, calls)
    }
    // The account changes only on fills, so the host sends it only then, as one buffer.
    const account = (buffer) => {
      const a = new Float64(buffer)
      side = a[0]; size = a[1]; entry = a[2]; balance = a[4]; floor = a[5]; ceiling = a[6]
      data.position = side === 0 ? null : { side: side > 0 ? "long" : "short", size, entry_price: entry, leverage: a[3] }
      data.balance = balance
    }
    const decideFrom = (from, to) => {
      if (from !== at + 1) windowOutOfOrder()
      try {
        for (let i = from; i < to; i++) {
          const high = highs[i], low = lows[i]
          if (low <= floor || high >= ceiling) return i
          at = i
          now = times[i]
          const close = closes[i], bar = { time: now, open: opens[i], high, low, close, volume: volumes[i] }
          // Neither push nor the window's shift may be the program's own.
          candles[candles.length] = bar
          if (candles.length > ${candleWindow}) shift.call(candles)
          data.bar = bar
          data.equity = side === 0 ? balance : balance + side * size * (close - entry)
          const d = decide(data)
          // A Promise (an async decide) would stringify as {}; it is named instead.
          if (d === null || typeof d !== "object" || d.operation !== "hold") {
            return i + ":" + (typeof d?.then === "function" ? "promise" : (stringify(d) ?? "undefined"))
          }
        }
      } catch (e) {
        return at + ":!" + describe(e)
      }
      return to
    }
    return { chunk, wanted: wantedWindow, account, decide: decideFrom, at: () => at }
  }
  return { describe, makeDriver }
})`

const exhausted = /out of memory|stack overflow|string too long/

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(Decision))

/** Decodes decisions, remembering the last ones: programs tend to repeat a few exact answers. */
const decisionDecoder = () => {
  const decoded = new Map<string, ReturnType<typeof decodeJson>>()
  return (text: string) => {
    let result = decoded.get(text)
    if (result === undefined) {
      // Bounded: a program that answers ever-new decisions (a changing reason, say) only churns it.
      if (decoded.size >= 1024) decoded.clear()
      decoded.set(text, result = decodeJson(text))
    }
    return result
  }
}

// The WASM loader is imported on first use, not when the server starts.
const newModule = () => import("quickjs-emscripten").then((q) => q.newQuickJSWASMModule())

/** One QuickJS instance: its own WASM module, so nothing a run does can reach another run. */
const openSandbox = (limits: SandboxLimits, onCall: () => void) =>
  Effect.acquireRelease(
    Effect.promise(newModule).pipe(Effect.map((module) => {
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

type Sandbox = Effect.Effect.Success<ReturnType<typeof openSandbox>>

/** An error thrown in the sandbox as text; an error thrown while describing it is not shown. */
const describeError = ({ budget, vm }: Sandbox, describe: QuickJSHandle, error: QuickJSHandle): string => {
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

/** A loaded program as the engine's `Decider`. */
const makeDecider = (sandbox: Sandbox, helpers: Helpers, run: ProgramRun): Decider => {
  const { budget, own, vm } = sandbox
  const driver = own(vm.unwrapResult(vm.callFunction(
    helpers.makeDriver,
    vm.undefined,
    helpers.decide,
    own(vm.newString(run.symbol)),
    own(vm.newString(run.timeframe)),
    own(vm.newString(JSON.stringify(run.params ?? {})))
  )))
  const [chunk, wanted, account, decide, at] = ["chunk", "wanted", "account", "decide", "at"].map((name) =>
    own(vm.getProp(driver, name))
  ) as [QuickJSHandle, QuickJSHandle, QuickJSHandle, QuickJSHandle, QuickJSHandle]
  const decodeDecision = decisionDecoder()
  const indicators = makeWindowIndicators(candleWindow)
  let bars: ReadonlyArray<Candle> = []
  /** The account the sandbox was last sent (position, balance and band, as `account` takes them). */
  let sent = new Float64Array(0)
  /** The bars of `bars` the sandbox holds now, and how many the next piece may hold. */
  let pieceStart = 0, pieceEnd = 0, pieceSize = firstPiece
  const fail = (index: number, reason: ProgramRunError["reason"], message: string): never => {
    throw new ProgramRunError({ reason, message, time: bars[index]!.time })
  }
  /** Fails the run for an error that escaped the driver's own try/catch: only an interrupt or an exhausted heap does. */
  const escaped = (error: QuickJSHandle, index: number, overBudget: boolean): never => {
    if (overBudget) {
      error.dispose()
      return fail(index, "cpu_budget_exceeded", "decide exceeded its CPU budget")
    }
    return fail(
      index,
      "memory_exceeded",
      `decide exhausted its memory: ${firstLine(describeError(sandbox, helpers.describe, error))}`
    )
  }
  /** Calls a function of the driver that runs none of the program's code, for bar `index`. */
  const callDriver = (fn: QuickJSHandle, index: number, ...args: Array<QuickJSHandle>) => {
    budget.start(1)
    const result = vm.callFunction(fn, vm.undefined, ...args)
    for (const handle of args) handle.dispose()
    return result.error ? escaped(result.error, index, budget.exceeded) : result.value
  }
  /** Hands the sandbox the bars from `start` on, with the host's indicator values for them. */
  const loadPiece = (start: number) => {
    const piece = bars.slice(start, start + pieceSize)
    pieceSize = Math.min(barsPerPiece, 2 * pieceSize)
    const asked = callDriver(wanted, start)
    indicators.want(vm.getString(asked))
    asked.dispose()
    const values = indicators.chunk(piece)
    // One column per field, which the driver reads as six arrays.
    const n = piece.length, buffer = new Float64Array(n * barFields)
    piece.forEach((bar, i) => {
      buffer[i] = bar.time
      buffer[n + i] = bar.open
      buffer[2 * n + i] = bar.high
      buffer[3 * n + i] = bar.low
      buffer[4 * n + i] = bar.close
      buffer[5 * n + i] = bar.volume
    })
    callDriver(
      chunk,
      start,
      vm.newArrayBuffer(buffer.buffer),
      vm.newNumber(n),
      vm.newArrayBuffer(values.buffer.buffer),
      vm.newString(values.calls)
    ).dispose()
    pieceStart = start
    pieceEnd = start + piece.length
  }
  return {
    chunk: (next) => {
      bars = next
      pieceStart = pieceEnd = 0
    },
    decide: (from, { balance, position: p }, band) => {
      if (from >= pieceEnd) loadPiece(from)
      const next = Float64Array.of(
        p === null ? 0 : p.side === "long" ? 1 : -1,
        p?.size ?? 0,
        p?.entry_price ?? 0,
        p?.leverage ?? 0,
        balance,
        band.floor,
        band.ceiling
      )
      if (next.some((n, i) => n !== sent[i])) {
        callDriver(account, from, vm.newArrayBuffer(next.buffer)).dispose()
        sent = next
      }
      const to = Math.min(pieceEnd, from + barsPerCall)
      const args = [from - pieceStart, to - pieceStart].map((n) => vm.newNumber(n))
      budget.start(to - from)
      const result = vm.callFunction(decide, vm.undefined, ...args)
      for (const handle of args) handle.dispose()
      if (result.error) {
        const overBudget = budget.exceeded
        const index = callDriver(at, from)
        // Stopped before its first bar (at is -1 then), the call is charged to that bar.
        const stoppedAt = pieceStart + Math.max(vm.getNumber(index), from - pieceStart)
        index.dispose()
        return escaped(result.error, stoppedAt, overBudget)
      }
      // A number is where the run stopped without a decision; a decision's text reads as NaN.
      const stopped = vm.getNumber(result.value)
      if (!Number.isNaN(stopped)) {
        result.value.dispose()
        return { index: pieceStart + stopped }
      }
      const text = vm.getString(result.value)
      result.value.dispose()
      const colon = text.indexOf(":")
      const index = pieceStart + Number(text.slice(0, colon))
      const answer = text.slice(colon + 1)
      if (answer.startsWith("!")) {
        return fail(
          index,
          exhausted.test(answer) ? "memory_exceeded" : "threw",
          `decide threw ${firstLine(answer.slice(1))}`
        )
      }
      if (answer === "promise") {
        return fail(
          index,
          "invalid_decision",
          "decide returned a Promise; it must return its decision directly (decide cannot be async)"
        )
      }
      const decision = Either.getOrElse(
        decodeDecision(answer),
        (e) =>
          fail(
            index,
            "invalid_decision",
            `decide returned an invalid decision: ${summarizeIssues(parseErrorIssues(e)).slice(0, 500)}`
          )
      )
      return { index, decision }
    }
  }
}

interface Helpers {
  readonly describe: QuickJSHandle
  readonly makeDriver: QuickJSHandle
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

  return {
    check: (code) => checkInWorker(code, bootstrap, limits).pipe(Effect.withSpan("ProgramRuntime.check")),
    load: (run) =>
      Effect.map(open(run.code, run.seed), ({ helpers, sandbox }) => makeDecider(sandbox, helpers, run)).pipe(
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
