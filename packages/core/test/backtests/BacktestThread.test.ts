import { describe, expect, it } from "@effect/vitest"
import { defaultSandboxLimits, defaultSettings, oneSymbol, runBacktest } from "@trading-platform/core"
import { Chunk, Effect, Exit, Scope, Stream, TestClock } from "effect"
import {
  type BacktestThread,
  backtestThreadCounts,
  backtestThreads,
  startBacktestThread
} from "../../src/backtests/BacktestThread.js"
import { outcomeOf, type ToThread } from "../../src/backtests/BacktestThreadProtocol.js"
import { packBars } from "../../src/backtests/PackedBars.js"
import { ProgramRuntime } from "../../src/sandbox/ProgramRuntime.js"
import type { SandboxLimits } from "../../src/sandbox/SandboxLimits.js"
import type { Candle } from "../../src/venues/Venue.js"
import { reportV8Unavailable, runtimes } from "../sandbox/Runtimes.js"

const bars: ReadonlyArray<Candle> = Array.from({ length: 2500 }, (_, i) => {
  const close = 100 + 10 * Math.sin(i / 25)
  return { time: i * 3_600_000, open: close - 0.5, high: close + 1, low: close - 1, close, volume: 1 }
})

const tradingProgram = `let n = 0
export function decide(data) {
  n++
  if (n % 10 !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: 0.5 }
}
`
/** Throws on its first bar, an error each engine words its own way. */
const throwing = `export function decide(data) { return data.nothing.here }`

/**
 * Per runtime, a call its CPU budget does not stop, the limits that leave it so, and how the end of
 * its thread reads. QuickJS cannot interrupt one call of a built-in: converting the largest BigInt
 * to decimal takes seconds, no interrupt check sees it, and the watchdog (twice the net) stops the
 * thread. V8 interrupts any code (and converts that BigInt at once), so an endless loop under a
 * budget no program spends stands for it, and the net stops the call inside the thread.
 */
const stuck = {
  quickjs: {
    call: "(2n ** 1000000n - 1n).toString()",
    limits: {},
    inDecide: /stuck in one call of decide for over 400 ms \(the sandbox's wall-clock safety net\)/,
    inLoad: /stuck in one call while loading for over 400 ms/
  },
  v8: {
    call: "for (;;) {}",
    limits: { cpuChecksPerCall: 1e12 },
    inDecide: /ran past the sandbox's wall-clock safety net of 200 ms/,
    inLoad: /ran past the sandbox's wall-clock safety net of 200 ms/
  }
} as const

// A short wall-clock safety net, so the watchdog (twice the net) fires long before the stuck call ends.
const netLimits: SandboxLimits = { ...defaultSandboxLimits, wallMillisPerCall: 200 }
const settings = defaultSettings("1h")
const run = (code: string) => ({ code, symbols: ["BTC"], timeframe: "1h" as const, params: {}, seed: 1 })
const markets = [{ rules: settings.rules, funding: { _tag: "Rates", rates: [] } }] as const

/** Runs `code` in a backtest thread under `limits` over `bars` after `warmup`, fed 1000 at a time as the workers do. */
const runInThread = (limits: SandboxLimits, code: string, warmup: ReadonlyArray<Candle> = []) =>
  drive(startBacktestThread({ run: run(code), settings, markets, limits }), warmup)

/** Runs a backtest over `bars` after `warmup` in the thread `started` gives, fed 1000 at a time as the workers do. */
const drive = (started: Effect.Effect<BacktestThread, never, Scope.Scope>, warmup: ReadonlyArray<Candle> = []) =>
  Effect.scoped(Effect.gen(function*() {
    const thread = yield* started
    let from = 0
    let warmedUp = false
    for (;;) {
      const message = yield* thread.take
      if (message._tag === "Done") return message.outcome
      if (!warmedUp) {
        warmedUp = true
        yield* thread.post({ _tag: "Warmup", bars: packBars([warmup]) })
        continue
      }
      yield* thread.post(
        from >= bars.length ? { _tag: "End" } : { _tag: "Window", bars: packBars([bars.slice(from, from += 1000)]) }
      )
    }
  }))

/** Polls (on the real clock) until no backtest thread is left; fails at the deadline. */
const untilNoThreads = Effect.gen(function*() {
  const deadline = Date.now() + 60_000
  while (backtestThreadCounts().live > 0) {
    if (Date.now() > deadline) return yield* Effect.die(new Error(`${backtestThreadCounts().live} threads still alive`))
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
  }
})

reportV8Unavailable()

describe.each(runtimes)("backtest threads running $name", ({ layer, runtime }) => {
  // The limits a thread gets name the runtime it runs.
  const limits: SandboxLimits = { ...netLimits, runtime }

  it.live(
    "the warm-up fills the program's window in the thread before the first bar of the run",
    () =>
      Effect.gen(function*() {
        // Trades only once it sees 30 candles; the run itself is 20 bars.
        const patient = `export function decide(data) {
  return data.candles.length >= 30 && !data.position ? { operation: "buy", target_portion_of_balance: 0.5 } : { operation: "hold" }
}
`
        const run20 = bars.slice(1000, 1020)
        const threadOf = (warmup: ReadonlyArray<Candle>) =>
          Effect.scoped(Effect.gen(function*() {
            const thread = yield* startBacktestThread({
              run: run(patient),
              settings,
              markets,
              limits
            })
            const sent: Array<ToThread> = [{ _tag: "Warmup", bars: packBars([warmup]) }, {
              _tag: "Window",
              bars: packBars([run20])
            }, {
              _tag: "End"
            }]
            for (;;) {
              const message = yield* thread.take
              if (message._tag === "Done") return message.outcome
              yield* thread.post(sent.shift()!)
            }
          }))
        const warmed = yield* threadOf(bars.slice(500, 1000))
        expect(warmed.warmed_up_bars).toBe(500)
        expect(warmed.fills[0]!.time).toBe(run20[1]!.time)
        const cold = yield* threadOf([])
        expect(cold.warmed_up_bars).toBe(0)
        expect(cold.fills).toEqual([])
        yield* untilNoThreads
      }),
    { timeout: 60_000 }
  )

  it.live("a run in a thread gives the outcome the engine gives on this thread", () =>
    Effect.gen(function*() {
      const inThread = yield* runInThread(limits, tradingProgram)
      const here = yield* Effect.flatMap(ProgramRuntime, (runtime) => runtime.load(run(tradingProgram))).pipe(
        Effect.flatMap((loaded) =>
          runBacktest(settings, oneSymbol(Stream.fromChunk(Chunk.fromIterable(bars))), loaded)
        ),
        Effect.scoped,
        Effect.provide(layer(limits))
      )
      expect(inThread).toEqual(outcomeOf(here))
      expect(inThread.trades.length).toBeGreaterThan(10)
      expect(inThread.equity_curve).toHaveLength(1000)
      yield* untilNoThreads
    }), { timeout: 60_000 })

  it.scoped(
    "the instance's threads run backtest after backtest, after a failed one too, and end a minute after they started",
    () =>
      Effect.gen(function*() {
        const before = backtestThreadCounts()
        const counts = () => {
          const now = backtestThreadCounts()
          return [now.started - before.started, now.live - before.live, now.busy] as const
        }
        const thread = yield* backtestThreads(limits, 1)
        const first = yield* drive(thread({ run: run(tradingProgram), settings, markets }))
        expect(yield* Effect.flip(drive(thread({ run: run(throwing), settings, markets })))).toMatchObject({
          _tag: "ProgramRunError",
          reason: "threw"
        })
        // Nothing of the runs before carries over into the next.
        expect(yield* drive(thread({ run: run(tradingProgram), settings, markets }))).toEqual(first)
        expect(counts()).toEqual([1, 1, 0])
        // The test clock moves the pool's clock past the thread's minute; the thread's own end takes real time.
        yield* TestClock.adjust("61 seconds")
        const deadline = Date.now() + 30_000
        while (counts()[1] > 0 && Date.now() < deadline) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        }
        expect(counts()).toEqual([1, 0, 0])
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a thread runs its programs on the runtime its limits name: a program's error reads as that runtime's",
    () =>
      Effect.gen(function*() {
        const inThread = yield* Effect.flip(runInThread(limits, throwing))
        const here = yield* Effect.flatMap(ProgramRuntime, (runtime) => runtime.load(run(throwing))).pipe(
          Effect.flatMap((loaded) =>
            runBacktest(settings, oneSymbol(Stream.fromChunk(Chunk.fromIterable(bars))), loaded)
          ),
          Effect.scoped,
          Effect.provide(layer(limits)),
          Effect.flip
        )
        expect(inThread).toMatchObject({ _tag: "ProgramRunError", reason: "threw" })
        expect(inThread.message).toBe(here.message)
        yield* untilNoThreads
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a thread whose run has failed ends cleanly once let go, run after run (terminated at once, it raced isolated-vm's teardown of the isolate, which aborted the process)",
    () =>
      Effect.gen(function*() {
        for (let i = 0; i < 30; i++) {
          const error = yield* Effect.flip(runInThread(limits, throwing))
          expect(error).toMatchObject({ _tag: "ProgramRunError", reason: "threw" })
        }
        yield* untilNoThreads
      }),
    { timeout: 120_000 }
  )

  const stuckIn = stuck[runtime]
  const stuckLimits: SandboxLimits = { ...limits, ...stuckIn.limits }

  it.live(
    "the watchdog (or, in V8, the net inside the thread) stops a thread stuck in one call; not the program's verdict, so the job may be tried again",
    () =>
      Effect.gen(function*() {
        const code = `let n = 0
export function decide(data) {
  if (++n === 1500) ${stuckIn.call}
  return { operation: "hold" }
}`
        const started = Date.now()
        const error = yield* Effect.flip(runInThread(stuckLimits, code))
        expect(error).toMatchObject({ _tag: "BacktestThreadDied" })
        expect(error.message).toMatch(stuckIn.inDecide)
        yield* untilNoThreads
        // Stopped soon after the net, not when the stuck call would have ended.
        expect(Date.now() - started).toBeLessThan(15_000)
      }),
    { timeout: 60_000 }
  )

  // On V8 this ended a thread just after a load it stopped, which made isolated-vm abort the whole
  // process about one time in eight (see `keepUntilExit`).
  it.live(
    "the watchdog (or, in V8, the net inside the thread) stops a program stuck in one call while it loads, as a failure of the thread, not of the program",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          runInThread(stuckLimits, `${stuckIn.call}\nexport function decide() { return { operation: "hold" } }`)
        )
        expect(error).toMatchObject({ _tag: "BacktestThreadDied" })
        expect(error.message).toMatch(stuckIn.inLoad)
        yield* untilNoThreads
      }),
    { timeout: 60_000 }
  )

  it.live("program failures cross the thread boundary as the same typed errors", () =>
    Effect.gen(function*() {
      const thrown = yield* Effect.flip(runInThread(
        limits,
        `let n = 0
export function decide() { if (++n > 5) throw new Error("boom at bar " + n); return { operation: "hold" } }`
      ))
      expect(thrown).toMatchObject({ _tag: "ProgramRunError", reason: "threw", time: 5 * 3_600_000 })
      expect(thrown.message).toMatch(/boom at bar 6/)
      const invalid = yield* Effect.flip(runInThread(limits, "export const decide = 1"))
      expect(invalid).toMatchObject({
        _tag: "ProgramInvalid",
        error: "The program must export a function decide(data)"
      })
      yield* untilNoThreads
    }), { timeout: 60_000 })

  it.live(
    "a failure of the thread's own code is BacktestThreadDied (the job is handed back), not a program error",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(Effect.gen(function*() {
          const thread = yield* startBacktestThread({
            run: run(tradingProgram),
            settings,
            markets,
            limits
          })
          expect((yield* thread.take)._tag).toBe("Pull")
          yield* thread.post({ _tag: "Warmup", bars: packBars([]) })
          expect((yield* thread.take)._tag).toBe("Pull")
          // Not candles: the engine's stream fails on it, a defect of the thread rather than of the program.
          yield* thread.post({ _tag: "Window", bars: null as never })
          return yield* thread.take
        })))
        expect(error._tag).toBe("BacktestThreadDied")
        expect(error.message).toMatch(/^The backtest thread failed: /)
        yield* untilNoThreads
      }),
    { timeout: 60_000 }
  )

  it.live(
    "closing the scope terminates the thread soon, even in the middle of a window of a program that spends its whole budget",
    () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const thread = yield* Scope.extend(
          startBacktestThread({
            run: run(`export function decide() { for (;;); }`),
            settings,
            markets,
            // The default net: the thread waits for no safety net to end.
            limits: { ...defaultSandboxLimits, runtime }
          }),
          scope
        )
        expect(backtestThreadCounts()).toMatchObject({ live: 1, busy: 1 })
        expect((yield* thread.take)._tag).toBe("Pull")
        yield* thread.post({ _tag: "Warmup", bars: packBars([]) })
        expect((yield* thread.take)._tag).toBe("Pull")
        yield* thread.post({ _tag: "Window", bars: packBars([bars.slice(0, 1000)]) })
        // Let the thread get well into a call of decide.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        const closing = Date.now()
        yield* Scope.close(scope, Exit.void)
        expect(backtestThreadCounts()).toMatchObject({ live: 0, busy: 0 })
        // QuickJS stops at once; a call into V8 ends when it has spent its counted budget, not at the net.
        expect(Date.now() - closing).toBeLessThan(8_000)
      }),
    { timeout: 60_000 }
  )
})
