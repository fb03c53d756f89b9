import {
  type Candle,
  candleWindow,
  type Decide,
  decideEachBar,
  type Decider,
  Decision,
  defaultSettings,
  hold,
  ProgramRuntime,
  QuickJsProgramRuntime,
  runBacktest
} from "@trading-platform/core"
import { Effect, Random, Schema, Stream } from "effect"
import { taSource } from "../packages/core/src/sandbox/TaSource.js"

const bars = 500_000
const settings = defaultSettings("1m")

/** The SMA crossover: long above the slow average, short below it. */
const decideSource = `function decide(data) {
  const fast = ta.sma(data.candles, 10), slow = ta.sma(data.candles, 30)
  if (slow === null) return { operation: "hold" }
  const side = data.position === null ? null : data.position.side
  if (fast > slow && side !== "long") return { operation: "buy", target_portion_of_balance: 0.5 }
  if (fast < slow && side !== "short") return { operation: "sell", target_portion_of_balance: 0.5 }
  return { operation: "hold" }
}`

/** A seeded random walk of one-minute bars. */
const candles = Effect.gen(function*() {
  const out: Array<Candle> = []
  let close = 100
  for (let i = 0; i < bars; i++) {
    const open = close
    close = Math.max(1, open * (1 + ((yield* Random.next) - 0.5) * 0.004))
    const wiggle = open * 0.001 * (yield* Random.next)
    out.push({ time: 1_700_000_000_000 + i * 60_000, open, high: Math.max(open, close) + wiggle, low: Math.min(open, close) - wiggle, close, volume: 1 })
  }
  return out
}).pipe(Effect.withRandom(Random.make("backtest bench")))

/** The same program as plain JavaScript in the host: same data contract, same window, same checks. */
const plainDecide = (): Decide => {
  const ta = new Function(`${taSource}\nreturn ta`)()
  const decide = new Function("ta", `${decideSource}\nreturn decide`)(ta) as (data: unknown) => { operation: string }
  const check = Schema.decodeUnknownSync(Decision)
  const history: Array<Candle> = []
  return (bar, account) => {
    history.push(bar)
    if (history.length > candleWindow) history.shift()
    const d = decide({ symbol: "BTC", timeframe: "1m", bar, candles: history, ...account, params: {} })
    return d.operation === "hold" ? hold : check(d)
  }
}

const measure = (label: string, data: ReadonlyArray<Candle>, decider: Decider) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* runBacktest(settings, Stream.fromIterable(data), decider)
    const seconds = (performance.now() - started) / 1000
    return { label, barsPerSecond: data.length / seconds, seconds, trades: result.metrics.total_trades, pnl: result.metrics.total_pnl }
  })

export const run = () =>
  Effect.gen(function*() {
    const data = yield* candles
    const sandboxed = yield* Effect.scoped(
      Effect.flatMap(
        ProgramRuntime,
        (runtime) => runtime.load({ code: `export ${decideSource}`, symbol: "BTC", timeframe: "1m", params: {}, seed: 1 })
      ).pipe(Effect.flatMap((decider) => measure("sandbox (QuickJS)", data, decider)))
    )
    const plain = yield* measure("plain JavaScript", data, decideEachBar(plainDecide()))
    console.log(`SMA crossover (10/30) over ${bars} one-minute bars, engine included\n`)
    console.log("| runner | bars/s | seconds | trades | total_pnl |")
    console.log("|---|---:|---:|---:|---:|")
    for (const r of [sandboxed, plain]) {
      console.log(`| ${r.label} | ${Math.round(r.barsPerSecond).toLocaleString("en")} | ${r.seconds.toFixed(2)} | ${r.trades} | ${r.pnl.toFixed(2)} |`)
    }
    console.log(`\nsandbox / plain: ${(sandboxed.barsPerSecond / plain.barsPerSecond).toFixed(3)}; same trades: ${sandboxed.trades === plain.trades && sandboxed.pnl === plain.pnl}`)
  }).pipe(Effect.provide(QuickJsProgramRuntime()), Effect.runPromise)
