import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { defaultSettings } from "../../src/backtests/Backtest.js"
import { oneSymbol, runBacktest } from "../../src/backtests/BacktestEngine.js"
import { ProgramInvalid, Unavailable } from "../../src/http/Errors.js"
import { checkThreadsStarted } from "../../src/sandbox/CheckWorker.js"
import { decideEachBar, type Decider } from "../../src/sandbox/Decider.js"
import { type AccountView, type Decision, ProgramRunError } from "../../src/sandbox/Decision.js"
import { ProgramRuntime } from "../../src/sandbox/ProgramRuntime.js"
import { compileProgram } from "../../src/sandbox/ProgramSource.js"
import { SandboxStalled } from "../../src/sandbox/Sandbox.js"
import { candleWindow, defaultSandboxLimits } from "../../src/sandbox/SandboxLimits.js"
import { mulberry32 } from "../../src/stats/Random.js"
import { type Candle } from "../../src/venues/Venue.js"
import { bars, decisions, flat } from "./Drive.js"
import { reportV8Unavailable, runtimes } from "./Runtimes.js"

/** Loads a program and answers its `Decider`, released with the test's scope. */
const load = (code: string, seed = 7) =>
  Effect.flatMap(
    ProgramRuntime,
    (runtime) => runtime.load({ code, symbols: ["BTC"], timeframe: "1h", params: { fast: 3 }, seed })
  )

/** A program that reports `expression` (evaluated inside decide) through `reason`. */
const reporting = (expression: string) =>
  `export function decide(data) { return { operation: "close", reason: JSON.stringify(${expression}) } }`

/** Feeds the bars to a reporting program and answers what it reported at the last one. */
const report = (expression: string, count = 1, account = flat) =>
  Effect.gen(function*() {
    const reported = decisions(yield* load(reporting(expression)), bars(count), account)
    return JSON.parse(reported[reported.length - 1]!.reason!)
  })

/** The typed error a call of decide throws, fed `count` bars. */
const failure = (code: string, count = 1) =>
  Effect.gen(function*() {
    const decider = yield* load(code)
    try {
      decisions(decider, bars(count))
    } catch (e) {
      if (e instanceof ProgramRunError) return e
      throw e
    }
    throw new Error("decide did not fail")
  })

const checkFailure = (code: string) => Effect.flip(Effect.flatMap(ProgramRuntime, (runtime) => runtime.check(code)))

reportV8Unavailable()

describe.each(runtimes)("$name program runtime", ({ layer }) => {
  it.layer(layer())((it) => {
    it.scoped("decide sees the documented data: symbol, timeframe, bar, candles ending with bar, position, balance, equity, params", () =>
      Effect.gen(function*() {
        const account: AccountView = {
          position: { side: "short", size: 2, entry_price: 101, leverage: 3 },
          balance: 9_000,
          equity: 0
        }
        // `data.symbols` holds each symbol's view; the first's is the top level's own.
        const data = yield* report(
          `Object.assign({}, data, {
            symbols: Object.keys(data.symbols),
            same: ["candles", "bar", "position", "timeframes"].every((k) => data.symbols.BTC[k] === data[k])
          })`,
          3,
          account
        )
        const [, , third] = bars(3)
        expect(data).toEqual({
          symbol: "BTC",
          symbols: ["BTC"],
          same: true,
          timeframe: "1h",
          timeframes: {},
          bar: third,
          candles: bars(3),
          position: { side: "short", size: 2, entry_price: 101, leverage: 3 },
          balance: 9_000,
          // Marked to the bar's close inside the sandbox, as the engine does.
          equity: 9_000 - 2 * (third!.close - 101),
          params: { fast: 3 }
        })
      }))

    it.scoped("candles keep the last 500 bars, oldest first", () =>
      Effect.gen(function*() {
        const seen = yield* report(
          "data.candles.length < 500 ? null : [data.candles.length, data.candles[0].time, data.candles[499].time === data.bar.time]",
          503
        )
        expect(seen).toEqual([500, bars(4)[3]!.time, true])
      }))

    it.scoped("the program reaches no host: no process, require, fetch, timers or modules, and no code made from text", () =>
      Effect.gen(function*() {
        const globals = yield* report(
          `["process", "require", "fetch", "setTimeout", "setInterval", "queueMicrotask", "XMLHttpRequest", "WebAssembly", "std", "os", "console"]
            .map((name) => typeof globalThis[name])`
        )
        expect(globals.every((t: string) => t === "undefined")).toBe(true)
        // Code made from text would escape the count of steps (V8): refused on both runtimes, in every form.
        const made = [
          `eval("1")`,
          `(0, eval)("1")`,
          `new Function("return 1")()`,
          `Function("return 1")()`,
          `(function () {}).constructor("return 1")()`,
          `(function* () {}).constructor("yield 1")`,
          `(async function () {}).constructor("return 1")`,
          `(async function* () {}).constructor("yield 1")`,
          `({}).constructor.constructor("return typeof process")()`
        ]
        const refused = yield* report(
          `[${
            made.map((code) => `() => ${code}`).join(", ")
          }].map((f) => { try { f(); return "ran" } catch (e) { return e.name } })`
        )
        expect(refused).toEqual(made.map(() => "EvalError"))
        // Functions are still Functions.
        expect(yield* report(`[(() => 1) instanceof Function, typeof Function.prototype.call]`)).toEqual([
          true,
          "function"
        ])
        const imported = yield* checkFailure(
          `import fs from "fs"\nexport function decide() { return { operation: "hold" } }`
        )
        expect(imported).toBeInstanceOf(ProgramInvalid)
      }))

    it.scoped("prototype tricks inside the sandbox do not leak into the host", () =>
      Effect.gen(function*() {
        const decider = yield* load(`
          Object.prototype.polluted = "yes"
          Array.prototype.map = () => { throw new Error("hijacked") }
          JSON.parse = () => ({ operation: "buy" })
          export function decide() { return { operation: "hold" } }`)
        expect(decisions(decider, bars(1))).toEqual([])
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        expect([1, 2].map((x) => x * 2)).toEqual([2, 4])
      }))

    it.scoped("the clock is the bar's time and Math.random is seeded, so runs repeat exactly", () =>
      Effect.gen(function*() {
        const clock = yield* report(
          "[Date.now(), new Date().getTime(), new Date(0).getTime(), new Date() instanceof Date]",
          2
        )
        expect(clock).toEqual([bars(2)[1]!.time, bars(2)[1]!.time, 0, true])
        const random = `export function decide() { return { operation: "close", reason: String(Math.random()) } }`
        const draws = (seed: number) =>
          Effect.map(load(random, seed), (decider) => decisions(decider, bars(3)).map((d) => d.reason))
        const first = yield* draws(1)
        expect(yield* draws(1)).toEqual(first)
        expect(yield* draws(2)).not.toEqual(first)
        // It is mulberry32 of the seed, as the host draws it (the robustness figures do).
        const host = mulberry32(1)
        expect(first).toEqual([String(host()), String(host()), String(host())])
      }))

    it.scoped("an endless loop in decide stops with cpu_budget_exceeded, and the next run still works", () =>
      Effect.gen(function*() {
        const error = yield* failure(`export function decide() { for (;;) {} }`)
        expect(error.reason).toBe("cpu_budget_exceeded")
        expect(error.time).toBe(bars(1)[0]!.time)
        const again = yield* load(`export function decide() { return { operation: "buy" } }`)
        expect(decisions(again, bars(1))).toEqual([{ operation: "buy" }])
      }))

    it.scoped("an endless loop, even one that catches, cannot escape the budget", () =>
      Effect.gen(function*() {
        const error = yield* failure(`export function decide() { for (;;) { try { for (;;) {} } catch (e) {} } }`)
        expect(error.reason).toBe("cpu_budget_exceeded")
      }))

    it.scoped("the budget is a count: a program stops, or not, at the same step on every run", () =>
      Effect.gen(function*() {
        // A loop of 10 000 iterations a bar is a hundredth of a bar's budget; 100 million are ten times it.
        const looping = (n: number) =>
          `export function decide() { let s = 0; for (let i = 0; i < ${n}; i++) s += i; return { operation: "buy", reason: String(s) } }`
        for (let run = 0; run < 3; run++) {
          expect(decisions(yield* load(looping(1e4)), bars(1))).toEqual([{ operation: "buy", reason: "49995000" }])
          expect((yield* failure(looping(1e8))).reason).toBe("cpu_budget_exceeded")
        }
      }))

    it.scoped("each bar of a batch has a bar's budget, as when decided alone, and a call hands back once it has spent one", () =>
      Effect.gen(function*() {
        // A bar's budget is a million iterations of a loop that both runtimes count once a turn
        // (QuickJS counts each jump, V8 each loop body): `heavy` of them on the bars `where` picks.
        const spending = (where: string, heavy: number) =>
          `export function decide(data) { const n = ${where} ? ${heavy} : 10; let i = 0; while (i++ < n) {} return { operation: "hold" } }`
        // Three bars' worth on bar 20 alone fails there, though its batch of 40 quiet bars holds 40 bars' budget.
        const error = yield* failure(spending("data.candles.length === 21", 3e6), 40)
        expect(error).toBeInstanceOf(ProgramRunError)
        expect(error.reason).toBe("cpu_budget_exceeded")
        expect(error.time).toBe(bars(40)[20]!.time)
        // 0.6 of a bar's budget on every bar passes, and a call asked for all 40 bars hands back
        // after two, having spent more than one bar's budget on them.
        const busy = yield* load(spending("true", 6e5))
        busy.chunk([bars(40)])
        const state = { balance: 10_000, positions: [null] }
        const open = [{ floor: -Infinity, ceiling: Infinity }]
        expect(busy.decide(0, state, open)).toEqual({ index: 2 })
        expect(busy.decide(2, state, open)).toEqual({ index: 4 })
        expect(decisions(yield* load(spending("true", 6e5)), bars(40))).toEqual([])
      }))

    it.scoped("a program that catches the budget's error, or looks for its counter, is still stopped", () =>
      Effect.gen(function*() {
        const caught = yield* failure(
          `export function decide() { try { for (;;) {} } catch (e) {} return { operation: "buy" } }`
        )
        expect(caught.reason).toBe("cpu_budget_exceeded")
        const recursing = yield* failure(
          `function f(n) { try { return n > 0 ? f(n - 1) + f(n - 1) : 0 } catch (e) { return f(n) } }\nexport function decide() { f(40); return { operation: "buy" } }`
        )
        expect(recursing.reason).toBe("cpu_budget_exceeded")
        // Whatever counts the steps (V8: a global the source calls) cannot be replaced or removed.
        const replacing = yield* failure(`for (const name of Object.getOwnPropertyNames(globalThis)) {
            try { globalThis[name] = () => {} } catch (e) {}
            try { Object.defineProperty(globalThis, name, { value: () => {} }) } catch (e) {}
            try { delete globalThis[name] } catch (e) {}
          }
          export function decide() { for (;;) {} }`)
        expect(replacing.reason).toBe("cpu_budget_exceeded")
        const loading = yield* checkFailure(`try { for (;;) {} } catch (e) {}\nexport function decide() {}`)
        expect(loading).toBeInstanceOf(ProgramInvalid)
        expect((loading as ProgramInvalid).error).toBe("The program exceeded its CPU budget while loading")
      }))

    it.scoped("loops of large built-in calls are charged for their size, so the CPU budget, not the safety net, stops them", () =>
      Effect.gen(function*() {
        for (
          const body of [
            "new Array(1e6).fill(1)",
            "big.join(\",\")",
            "big.slice().reverse()",
            "\"x\".repeat(3e6)",
            "JSON.stringify(big)",
            "JSON.stringify(keyed)",
            "Object.keys(keyed)",
            "Object.entries(keyed)",
            "Reflect.ownKeys(keyed)"
          ]
        ) {
          const error = yield* failure(
            `const big = new Array(1e6).fill(1), keyed = {}\nfor (let i = 0; i < 1e5; i++) keyed["k" + i] = i\nexport function decide() { for (;;) ${body} }`
          )
          expect(error.reason, body).toBe("cpu_budget_exceeded")
        }
      }))

    it.scoped("exhausting memory or the stack stops with memory_exceeded", () =>
      Effect.gen(function*() {
        const heap = yield* failure(
          `export function decide() { const a = []; for (;;) a.push(new Float64Array(1 << 20)) }`
        )
        expect(heap.reason).toBe("memory_exceeded")
        const stack = yield* failure(`const f = (n) => f(n + 1) + 1\nexport function decide() { return f(0) }`)
        expect(stack.reason).toBe("memory_exceeded")
      }))

    it.scoped("a throw stops with threw and the program's message", () =>
      Effect.gen(function*() {
        const error = yield* failure(`export function decide() { throw new RangeError("no data") }`)
        expect(error.reason).toBe("threw")
        expect(error.message).toContain("RangeError: no data")
        const odd = yield* failure(`export function decide() { throw { get message() { throw 1 } } }`)
        expect(odd.reason).toBe("threw")
      }))

    it.scoped("garbage answers stop with invalid_decision", () =>
      Effect.gen(function*() {
        for (
          const answer of [
            "undefined",
            `"buy"`,
            `{ operation: "fly" }`,
            `{ operation: "buy", leverage: 1000 }`,
            `{ operation: "sell", target_portion_of_balance: 2 }`,
            `{ operation: "buy", order_type: "limit" }`,
            `{ operation: "close", order_type: "stop", entry_price: 10 }`,
            `{ operation: "buy", trailing_stop: 1.5 }`,
            `{ operation: "buy", time_in_force: "day" }`,
            // Stored with the run: a decision is bounded in size.
            `{ operation: "buy", symbol: "X".repeat(41) }`,
            `[1, 2]`
          ]
        ) {
          const error = yield* failure(`export function decide() { return ${answer} }`)
          expect(error.reason, answer).toBe("invalid_decision")
        }
        // A resting entry's rule names what is missing.
        const limit = yield* failure(`export function decide() { return { operation: "buy", order_type: "limit" } }`)
        expect(limit.message).toContain("a limit order needs an entry_price")
        const cyclic = yield* failure(
          `export function decide() { const d = { operation: "buy" }; d.self = d; return d }`
        )
        expect(cyclic.reason).toBe("threw")
      }))

    it.scoped("null optional fields read as absent", () =>
      Effect.gen(function*() {
        const decider = yield* load(
          `export function decide() { return { operation: "buy", leverage: null, reason: "x" } }`
        )
        expect(decisions(decider, bars(1))).toEqual([{ operation: "buy", reason: "x" }])
      }))

    it.effect("check names the line and column of a syntax error, and requires an exported decide", () =>
      Effect.gen(function*() {
        const before = checkThreadsStarted()
        const syntax = yield* checkFailure(`export function decide(data) {\n  return {(\n}`)
        expect(syntax).toMatchObject({ _tag: "ProgramInvalid", line: 2, column: 11 })
        const thrown = yield* checkFailure(`const x = 1\nnull.x\nexport function decide() {}`)
        expect(thrown).toMatchObject({ line: 2 })
        expect((yield* checkFailure(`export function choose() {}`)).error).toMatch(/decide/)
        expect((yield* checkFailure(`export const decide = 3`)).error).toMatch(/decide/)
        expect((yield* checkFailure(`for (;;) {}\nexport function decide() {}`)).error).toMatch(/CPU/)
        yield* Effect.flatMap(
          ProgramRuntime,
          (runtime) => runtime.check(`export function decide() { return { operation: "hold" } }`)
        )
        // One warm thread checked them all, after each failure too (one was started unless an earlier test's was kept).
        expect(checkThreadsStarted() - before).toBeLessThanOrEqual(1)
      }))

    it.scoped("ta offers sma, ema, rsi, macd, atr and bollinger", () =>
      Effect.gen(function*() {
        const values = yield* report(
          `(() => {
          const up = Array.from({ length: 40 }, (_, i) => i + 1)
          const same = Array.from({ length: 40 }, () => 5)
          const candles = same.map((c) => ({ open: c, high: c + 1, low: c - 1, close: c }))
          return [ta.sma(up, 5), ta.sma(up, 50), ta.ema(same, 10), ta.rsi(up, 14), ta.macd(same), ta.atr(candles, 14),
            ta.bollinger(same, 20), ta.sma(data.candles, 2)]
        })()`,
          2
        )
        const [first, second] = bars(2)
        expect(values).toEqual([
          38,
          null,
          5,
          100,
          { macd: 0, signal: 0, histogram: 0 },
          2,
          { upper: 5, middle: 5, lower: 5 },
          (first!.close + second!.close) / 2
        ])
      }))

    it.scoped("a backtest of a sandboxed program is deterministic", () =>
      Effect.gen(function*() {
        const code = `export function decide(data) {
          const fast = ta.sma(data.candles, data.params.fast), slow = ta.sma(data.candles, 10)
          if (slow === null) return { operation: "hold" }
          return { operation: fast > slow ? "buy" : "sell", target_portion_of_balance: 0.5 + Math.random() / 2 }
        }`
        const once = Effect.flatMap(load(code), (decide) =>
          runBacktest(defaultSettings("1h"), oneSymbol(Stream.fromIterable(bars(300))), decide))
        const first = yield* once
        expect(first.metrics.total_trades).toBeGreaterThan(5)
        expect(yield* once).toEqual(first)
      }))

    it.scoped("batched in the sandbox, a run matches the same program decided bar by bar in the host, exits included", () =>
      Effect.gen(function*() {
        // Enters on every turn with stops, take-profits and high leverage, so every kind of exit
        // happens inside batches of quiet bars.
        const source = `function decide(data) {
          const c = data.candles, n = c.length
          if (n < 3) return { operation: "hold" }
          const up = c[n - 1].close > c[n - 2].close, wasUp = c[n - 2].close > c[n - 3].close
          if (up === wasUp) return { operation: "hold" }
          const close = data.bar.close
          return up
            ? { operation: "buy", leverage: 5, target_portion_of_balance: 0.3, take_profit_price: close * 1.05, stop_loss_price: close * 0.97 }
            : { operation: "sell", leverage: n % 2 === 0 ? 50 : 2, target_portion_of_balance: 0.3, take_profit_price: n % 4 === 1 ? close * 0.5 : close * 0.95 }
        }`
        // A seeded random walk with wide bars.
        let seed = 42, close = 100
        const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
        const candles = oneSymbol(Stream.fromIterable(
          bars(2_000).map((bar) => {
            const open = close
            close = open * (1 + (random() - 0.5) * 0.06)
            return {
              ...bar,
              open,
              close,
              high: Math.max(open, close) * (1 + random() * 0.02),
              low: Math.min(open, close) * (1 - random() * 0.02)
            }
          })
        ))
        const settings = defaultSettings("1h")
        const sandboxed = yield* Effect.flatMap(
          load(`export ${source}`),
          (decider) => runBacktest(settings, candles, decider)
        )
        const history: Array<Candle> = []
        const hostDecide = new Function(`${source}\nreturn decide`)() as (data: unknown) => Decision
        const hosted = yield* runBacktest(
          settings,
          candles,
          decideEachBar((bar, account) => {
            history.push(bar)
            if (history.length > candleWindow) history.shift()
            return hostDecide({ bar, candles: history, ...account })
          })
        )
        expect(new Set(sandboxed.trades.map((t) => t.exit_reason))).toEqual(
          new Set(["take_profit", "stop_loss", "liquidation", "reversal"])
        )
        expect(sandboxed).toEqual(hosted)
      }))

    it.scoped("a failing program fails the backtest with its typed error", () =>
      Effect.gen(function*() {
        const decide = yield* load(
          `export function decide(data) { if (data.candles.length === 3) throw new Error("third"); return { operation: "hold" } }`
        )
        const exit = yield* Effect.exit(
          runBacktest(defaultSettings("1h"), oneSymbol(Stream.fromIterable(bars(10))), decide)
        )
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error).toMatchObject({
          reason: "threw",
          time: bars(3)[2]!.time
        })
      }))
  })
})

/** 1h bars of two symbols from two hours into a 4h period (ETH at a tenth of BTC's price), and their decider's drive. */
const fourHours = 14_400_000
const pairBars = (count: number): [Array<Candle>, Array<Candle>] => {
  const btc = bars(count).map((b, i) => ({ ...b, time: 118_056 * fourHours + (i + 2) * 3_600_000 }))
  return [btc, btc.map((b) => ({ ...b, open: b.open / 10, high: b.high / 10, low: b.low / 10, close: b.close / 10 }))]
}
const open = { floor: -Infinity, ceiling: Infinity }
const driveBoth = (decider: Decider, both: ReadonlyArray<ReadonlyArray<Candle>>, positions = [null, null]) => {
  decider.chunk(both)
  const out: Array<ReadonlyArray<Decision>> = []
  for (let from = 0; from < both[0]!.length;) {
    const stop = decider.decide(from, { balance: 10_000, positions }, [open, open])
    if (stop.decisions !== undefined) out.push(stop.decisions)
    from = stop.decisions === undefined ? stop.index : stop.index + 1
  }
  return out
}

describe.each(runtimes)("$name runtime serving one program's runs one after another", ({ layer }) => {
  // What a run leaves behind: its module's state, the globals it wrote, a built-in it replaced,
  // and how far its seeded Math.random went. A search's trials must each start from none of it.
  const leaky = `let calls = 0
    globalThis.loads = (globalThis.loads ?? 0) + 1
    const realIncludes = Array.prototype.includes
    export function decide(data) {
      calls++
      const before = [].includes(1)
      Array.prototype.includes = () => true
      if (data.params.fail && calls === 2) throw new Error("on purpose")
      return { operation: "close", reason: JSON.stringify([calls, globalThis.loads, before, Math.random()]) }
    }`
  const run = (params: unknown) =>
    Effect.gen(function*() {
      const runtime = yield* ProgramRuntime
      const decider = yield* runtime.load({ code: leaky, symbols: ["BTC"], timeframe: "1h", params, seed: 7 })
      return decisions(decider, bars(3)).map((d) => JSON.parse(d.reason!))
    }).pipe(Effect.scoped)

  it.layer(layer(undefined, "oneProgram"))((it) => {
    it.effect("each run starts afresh: no module state, global, replaced built-in or random draw carries over", () =>
      Effect.gen(function*() {
        const first = yield* run({})
        expect(first.map(([calls, loads, before]) => [calls, loads, before])).toEqual([[1, 1, false], [2, 1, true], [
          3,
          1,
          true
        ]])
        // A run that threw does not spoil the next one either.
        expect((yield* Effect.exit(run({ fail: true })))._tag).toBe("Failure")
        expect(yield* run({})).toEqual(first)
        expect(yield* run({})).toEqual(first)
      }))
  })
})

describe.each(runtimes)("the $name sandbox's wall-clock safety net", ({ layer, runtime }) => {
  // A budget no program spends and a 50 ms net: what a far too slow or overloaded machine looks like.
  it.layer(layer({ ...defaultSandboxLimits, cpuChecksPerCall: 1e12, wallMillisPerCall: 50 }))((it) => {
    it.scoped("stops a call that outlives it as SandboxStalled, which is not the program's verdict", () =>
      Effect.gen(function*() {
        const decider = yield* load(`export function decide() { for (;;) {} }`)
        const error = (() => {
          try {
            decisions(decider, bars(1))
          } catch (e) {
            return e
          }
        })()
        expect(error).toBeInstanceOf(SandboxStalled)
        expect(error).not.toBeInstanceOf(ProgramRunError)
        expect((error as SandboxStalled).message).toMatch(/safety net of 50 ms/)
      }))

    it.effect("a check it stops answers 503 unavailable, not program_invalid", () =>
      Effect.gen(function*() {
        const error = yield* checkFailure(`for (;;) {}\nexport function decide() {}`)
        expect(error).toBeInstanceOf(Unavailable)
        expect(error.error).toMatch(/safety net of 50 ms/)
      }))

    it.effect(
      "a check thread the watchdog stopped is not lent again: the next check answers from a new thread",
      () =>
        Effect.gen(function*() {
          // One call of a built-in QuickJS cannot interrupt: the watchdog ends its thread. V8's net stops it inside.
          const stuck = runtime === "quickjs" ? "(2n ** 1000000n - 1n).toString()" : "for (;;) {}"
          expect(yield* checkFailure(`${stuck}\nexport function decide() {}`)).toBeInstanceOf(Unavailable)
          const before = checkThreadsStarted()
          const parameters = yield* Effect.flatMap(
            ProgramRuntime,
            (runtime) =>
              runtime.check(`export const parameters = { n: { kind: "int", min: 1, max: 9, default: 2 } }
export function decide() { return { operation: "hold" } }`)
          )
          expect(parameters).toEqual({ n: { kind: "int", min: 1, max: 9, default: 2 } })
          // V8's thread answered (the net stopped the call inside it), so it is lent again.
          expect(checkThreadsStarted() - before).toBe(runtime === "quickjs" ? 1 : 0)
        }),
      { timeout: 30_000 }
    )
  })

  it.layer(layer({ ...defaultSandboxLimits, wallMillisPerCall: 60 * 60_000 }))((it) => {
    it.scoped("plays no part in the verdict: with an hour's net the budget still stops an endless loop", () =>
      Effect.gen(function*() {
        expect((yield* failure(`export function decide() { for (;;) {} }`)).reason).toBe("cpu_budget_exceeded")
      }))
  })
})

describe.each(runtimes)("$name program runtime over several symbols and timeframes", ({ layer }) => {
  const loadPair = (code: string, timeframes: ReadonlyArray<"4h" | "1d"> = []) =>
    Effect.flatMap(
      ProgramRuntime,
      (runtime) => runtime.load({ code, symbols: ["BTC", "ETH"], timeframe: "1h", timeframes, params: {}, seed: 1 })
    )

  it.layer(layer())((it) => {
    it.scoped("data.symbols holds each symbol's candles, bar and position; decisions name their symbol, or mean the first", () =>
      Effect.gen(function*() {
        const decider = yield* loadPair(`export function decide(data) {
          if (data.candles.length < 3) return { operation: "hold" }
          const eth = data.symbols.ETH
          const seen = [Object.keys(data.symbols), eth.candles.length, eth.bar.close, eth.candles[eth.candles.length - 1] === eth.bar, eth.position]
          return [{ symbol: "ETH", operation: "buy", reason: JSON.stringify(seen) }, { operation: "sell" }]
        }`)
        const both = pairBars(5)
        const long = { side: "long" as const, size: 3, entry_price: 9, leverage: 2 }
        const [first] = driveBoth(decider, both, [null, long] as never)
        expect(first![0]).toEqual({ operation: "sell" })
        expect(first![1]).toMatchObject({ symbol: "ETH", operation: "buy" })
        expect(JSON.parse(first![1]!.reason!)).toEqual([["BTC", "ETH"], 3, both[1][2]!.close, true, long])
      }))

    it.scoped("a decision naming a symbol the run does not trade, or two for one symbol, stop with invalid_decision", () =>
      Effect.gen(function*() {
        for (
          const [answer, message] of [
            [`{ operation: "buy", symbol: "SOL" }`, "decide named SOL, which this run does not trade (BTC, ETH)"],
            [`[{ operation: "buy" }, { operation: "sell", symbol: "BTC" }]`, "more than one decision for BTC"]
          ]
        ) {
          const decider = yield* loadPair(`export function decide() { return ${answer} }`)
          const error = yield* Effect.flip(Effect.try({
            try: () => driveBoth(decider, pairBars(1)),
            catch: (e) => e as ProgramRunError
          }))
          expect(error.reason).toBe("invalid_decision")
          expect(error.message).toContain(message)
        }
      }))

    it.scoped("data.timeframes holds the longer timeframes' closed candles, built from the run's bars, the partial first one left out", () =>
      Effect.gen(function*() {
        const decider = yield* loadPair(
          `export function decide(data) {
            return { operation: "close", reason: JSON.stringify([data.timeframes, data.symbols.ETH.timeframes["4h"].length]) }
          }`,
          ["4h", "1d"]
        )
        const both = pairBars(11)
        const reported = driveBoth(decider, both).map((d) => JSON.parse(d[0]!.reason!))
        // Bars 0-1 finish a period begun before them; bars 2-5 and 6-9 make the two whole 4h candles.
        const hourly = both[0]
        const candle = (from: number) => ({
          time: hourly[from]!.time,
          open: hourly[from]!.open,
          high: Math.max(...hourly.slice(from, from + 4).map((b) => b.high)),
          low: Math.min(...hourly.slice(from, from + 4).map((b) => b.low)),
          close: hourly[from + 3]!.close,
          volume: hourly.slice(from, from + 4).reduce((sum, b) => sum + b.volume, 0)
        })
        expect(reported[4]).toEqual([{ "4h": [], "1d": [] }, 0])
        expect(reported[5]).toEqual([{ "4h": [candle(2)], "1d": [] }, 1])
        expect(reported[10]).toEqual([{ "4h": [candle(2), candle(6)], "1d": [] }, 2])
      }))
  })
})

describe("compileProgram", () => {
  it.effect("compiles TypeScript to JavaScript that keeps its lines", () =>
    Effect.gen(function*() {
      const js = yield* compileProgram(
        `type D = { candles: Array<unknown> }\nexport function decide(data: D): { operation: string } {\n  return { operation: "hold" }\n}`,
        "typescript"
      )
      expect(js).not.toContain(": D")
      expect(js.split("\n")[1]).toContain("export function decide(data)")
    }))

  it.effect("answers program_invalid with the position of a TypeScript syntax error, and unsupported_language otherwise", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(compileProgram(`export function decide(data: number {\n}`, "typescript")))
        .toMatchObject({
          _tag: "ProgramInvalid",
          line: 1,
          column: 37
        })
      expect((yield* Effect.flip(compileProgram("x", "python")))._tag).toBe("UnsupportedLanguage")
      expect(yield* compileProgram("export const decide = 1", "javascript")).toBe("export const decide = 1")
    }))
})
