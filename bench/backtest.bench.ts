import {
  type Candle,
  candleWindow,
  type Decide,
  decideEachBar,
  type Decider,
  Decision,
  defaultSettings,
  hold,
  oneSymbol,
  ProgramRuntime,
  QuickJsProgramRuntime,
  runBacktest
} from "@trading-platform/core"
import { Effect, type Layer, Random, Schema, type Scope, Stream } from "effect"
import { hostTa } from "../packages/core/src/indicators/TaSource.js"
import { loadIsolatedVm } from "../packages/core/src/sandbox/IsolatedVm.js"
import { V8ProgramRuntime } from "../packages/core/src/sandbox/V8Runtime.js"

const bars = 500_000
const settings = defaultSettings("1m")

/** The SMA crossover: long above the slow average, short below it. */
const crossover = (averages: string) =>
  `function decide(data) {
  ${averages}
  if (slow === null) return { operation: "hold" }
  const side = data.position === null ? null : data.position.side
  if (fast > slow && side !== "long") return { operation: "buy", target_portion_of_balance: 0.5 }
  if (fast < slow && side !== "short") return { operation: "sell", target_portion_of_balance: 0.5 }
  return { operation: "hold" }
}`

/** The averages as programs write them (`docs/programs.md`): `ta` over `data.candles`, which the host computes. */
const withTa = crossover("const fast = ta.sma(data.candles, 10), slow = ta.sma(data.candles, 30)")

/** The same averages summed by the program's own loop, in the same order: interpreted all the way. */
const ownLoop = crossover(`const c = data.candles, n = c.length
  const sma = (period) => { if (n < period) return null; let sum = 0; for (let i = n - period; i < n; i++) sum += c[i].close; return sum / period }
  const fast = sma(10), slow = sma(30)`)

/** A seeded random walk of one-minute bars. */
const candles = Effect.gen(function*() {
  const out: Array<Candle> = []
  let close = 100
  for (let i = 0; i < bars; i++) {
    const open = close
    close = Math.max(1, open * (1 + ((yield* Random.next) - 0.5) * 0.004))
    const wiggle = open * 0.001 * (yield* Random.next)
    out.push({
      time: 1_700_000_000_000 + i * 60_000,
      open,
      high: Math.max(open, close) + wiggle,
      low: Math.min(open, close) - wiggle,
      close,
      volume: 1
    })
  }
  return out
}).pipe(Effect.withRandom(Random.make("backtest bench")))

/** The same program as plain JavaScript in the host: same data contract, same window, same checks. */
const plainDecide = (): Decide => {
  const decide = new Function("ta", `${withTa}\nreturn decide`)(hostTa) as (data: unknown) => { operation: string }
  const check = Schema.decodeUnknownSync(Decision)
  const history: Array<Candle> = []
  return (bar, account) => {
    history.push(bar)
    if (history.length > candleWindow) history.shift()
    const d = decide({ symbol: "BTC", timeframe: "1m", bar, candles: history, ...account, params: {} })
    return d.operation === "hold" ? hold : check(d)
  }
}

/** Measured runs of each runner, taken in turns after one warm-up run each. */
const rounds = 3

/** One backtest of `data` with a fresh `Decider`: its speed and what it traded. */
const backtest = <R>(data: ReadonlyArray<Candle>, decider: Effect.Effect<Decider, never, R | Scope.Scope>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* Effect.scoped(
      Effect.flatMap(decider, (d) => runBacktest(settings, oneSymbol(Stream.fromIterable(data)), d))
    )
    const seconds = (performance.now() - started) / 1000
    return { barsPerSecond: data.length / seconds, trades: result.metrics.total_trades, pnl: result.metrics.total_pnl }
  })

const sandboxed = (code: string, runtime: Layer.Layer<ProgramRuntime>) =>
  Effect.flatMap(
    ProgramRuntime,
    (runtime) => runtime.load({ code: `export ${code}`, symbols: ["BTC"], timeframe: "1m", params: {}, seed: 1 })
  ).pipe(
    Effect.orDie,
    Effect.provide(runtime)
  )

/** Both runtimes, V8 where `isolated-vm` loads (run with `--no-node-snapshot`, as `npm run bench` does). */
const addon = loadIsolatedVm()
const runtimes: Array<[string, Layer.Layer<ProgramRuntime>]> = [
  ["QuickJS", QuickJsProgramRuntime()],
  ...("ivm" in addon ? [["V8", V8ProgramRuntime(addon.ivm)] as [string, Layer.Layer<ProgramRuntime>]] : [])
]

const runners = [
  { label: "plain JavaScript (baseline)", decider: Effect.sync(() => decideEachBar(plainDecide())) },
  ...runtimes.flatMap(([name, runtime]) => [
    { label: `${name} sandbox, \`ta.sma\` on \`data.candles\``, decider: sandboxed(withTa, runtime) },
    { label: `${name} sandbox, the averages in the program's own loop`, decider: sandboxed(ownLoop, runtime) }
  ])
]

/**
 * Each runner runs once as warm-up (V8 optimises the QuickJS interpreter's WASM and the engine
 * meanwhile), then `rounds` times in turns with the others, so that a slow spell of the shared
 * machine falls on all of them; the best run of each is reported, the ratio against the best plain run.
 */
export const run = () =>
  Effect.gen(function*() {
    const data = yield* candles
    if ("reason" in addon) console.log(`The V8 runtime is left out: ${addon.reason}.\n`)
    for (const runner of runners) yield* backtest(data, runner.decider)
    const runs = runners.map(() => [] as Array<Effect.Effect.Success<ReturnType<typeof backtest>>>)
    for (let round = 0; round < rounds; round++) {
      for (const [i, runner] of runners.entries()) runs[i]!.push(yield* backtest(data, runner.decider))
    }
    const best = runs.map((r) => Math.max(...r.map((x) => x.barsPerSecond)))
    console.log(
      `SMA crossover (10/30) over ${bars} one-minute bars, engine included; best of ${rounds} runs in turns, after a warm-up run\n`
    )
    console.log("| runner | bars/s (best) | bars/s (each run) | vs plain |")
    console.log("|---|---:|---:|---:|")
    const format = (n: number) => Math.round(n).toLocaleString("en")
    runners.forEach((runner, i) => {
      console.log(
        `| ${runner.label} | ${format(best[i]!)} | ${runs[i]!.map((r) => format(r.barsPerSecond)).join(", ")} | ${
          (best[i]! / best[0]!).toFixed(2)
        } |`
      )
    })
    const first = runs[0]![0]!
    const same = runs.flat().every((r) => r.trades === first.trades && r.pnl === first.pnl)
    console.log(`\n${first.trades} trades, total_pnl ${first.pnl.toFixed(2)}; the same in every run: ${same}`)
  }).pipe(Effect.runPromise)
