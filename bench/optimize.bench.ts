// Optimisations (issue 35 point 6): the SMA crossover's 100-point grid (fast 5..50 × slow 20..200)
// over a year of hourly bars, and a random search over a year of one-minute bars, each run as a
// durable optimisation on one platform instance (in-memory PGlite, its trial workers in threads)
// with 1 and then 2 trial workers, in QuickJS and (where isolated-vm loads) in V8, against the same
// trials run one after another as plain JavaScript in this process (same candles, same rulebook,
// same data contract) in the same run.
// BENCH_RANDOM_TRIALS sets the random search's trials (default 20; the 1,000 take hours
// at the sandbox's speed, and the rate per trial does not change with their number).
import {
  type Candle,
  candleWindow,
  type Decide,
  decideEachBar,
  Decision,
  defaultSandboxLimits,
  hold,
  loadIsolatedVm,
  MarketData,
  Optimizations,
  PlatformConfig,
  PlatformLive,
  Programs,
  runBacktest,
  type SandboxRuntimeName,
  Users
} from "@trading-platform/core"
import { testOptions } from "@trading-platform/core/testing"
import { Duration, Effect, Layer, Schema, Stream } from "effect"
import { runTerms } from "../packages/core/src/backtests/BacktestWorkers.js"
import { sharedFunding } from "../packages/core/src/backtests/ThreadFunding.js"
import { hostTa } from "../packages/core/src/indicators/TaSource.js"
import type { OptimizationRequest } from "../packages/core/src/research/Optimization.js"
import { gridPoint, propose, type Space } from "../packages/core/src/research/Search.js"
import { timeframeMillis } from "../packages/core/src/venues/Venue.js"

const decideSource = `function decide(data) {
  const fast = ta.sma(data.candles, data.params.fast), slow = ta.sma(data.candles, data.params.slow)
  if (fast === null || slow === null) return { operation: "hold" }
  const side = data.position === null ? null : data.position.side
  if (fast > slow && side !== "long") return { operation: "buy", target_portion_of_balance: 0.5 }
  if (fast < slow && side !== "short") return { operation: "sell", target_portion_of_balance: 0.5 }
  return { operation: "hold" }
}`

/** The SMA example with its two averages declared. */
const program = `export const parameters = {
  fast: { kind: "int", min: 2, max: 100, default: 10 },
  slow: { kind: "int", min: 10, max: 300, default: 30 }
}
export ${decideSource}
`

const searches = [
  {
    label: "grid 10 × 10, a year of 1h bars",
    request: {
      symbol: "BTC",
      timeframe: "1h",
      start: "2024-01-01T00:00:00Z",
      end: "2025-01-01T00:00:00Z",
      search: "grid",
      space: { fast: { min: 5, max: 50, step: 5 }, slow: { min: 20, max: 200, step: 20 } },
      objective: "sharpe"
    }
  },
  {
    label: "random, a year of 1m bars",
    request: {
      symbol: "BTC",
      timeframe: "1m",
      start: "2024-01-01T00:00:00Z",
      end: "2025-01-01T00:00:00Z",
      search: "random",
      space: { fast: { min: 5, max: 50 }, slow: { min: 20, max: 200 } },
      budget: { trials: Number(process.env["BENCH_RANDOM_TRIALS"] ?? 20) },
      objective: "sharpe"
    }
  }
] as const

const instance = (workers: number, runtime: SandboxRuntimeName = "quickjs") =>
  PlatformLive.pipe(
    Layer.provideMerge(PlatformConfig.layer(testOptions({ kind: "pglite", dataDir: "memory://" }, {
      backtests: {
        concurrency: workers,
        pollInterval: Duration.seconds(1),
        lease: Duration.minutes(5),
        maxAttempts: 3
      },
      sandbox: { ...defaultSandboxLimits, runtime }
    })))
  )

/** The search's trials as plain JavaScript in this process, one after another: their metrics, and the seconds they took (candles read once, outside the time). */
const plainTrials = (request: OptimizationRequest, points: ReadonlyArray<Record<string, number>>) =>
  Effect.gen(function*() {
    const market = yield* MarketData
    const venues = (yield* PlatformConfig).venues
    const source = yield* market.source({ id: 0 as never }, "venue1")
    const step = timeframeMillis[request.timeframe]
    const start = Math.ceil(Date.parse(request.start) / step) * step
    const end = Date.parse(request.end)
    const read = (from: number, to: number) =>
      Effect.gen(function*() {
        const all: Array<Candle> = []
        for (let at = from; at < to; at += 50_000 * step) {
          all.push(
            ...(yield* market.candles(source, {
              symbol: "BTC",
              timeframe: request.timeframe,
              start: at,
              end: Math.min(to, at + 50_000 * step)
            }))
          )
        }
        return all
      })
    const warmup = yield* read(start - candleWindow * step, start)
    const bars = yield* read(start, end)
    const terms = yield* runTerms(market, venues, {
      symbols: ["BTC"],
      timeframe: request.timeframe,
      start_at: request.start,
      end_at: request.end,
      initial_balance: 10_000,
      fee_rate: 0.00035,
      maker_fee_rate: 0.0001,
      slippage: 0.0005,
      slippage_model: "fixed",
      fill_timing: "next_open",
      margin_mode: "isolated",
      leverage: 1
    }, source)
    const decide = new Function("ta", `${decideSource}\nreturn decide`)(hostTa) as (data: unknown) => {
      operation: string
    }
    const check = Schema.decodeUnknownSync(Decision)
    const plain = (params: Record<string, number>): Decide => {
      const history: Array<Candle> = []
      return (bar, account) => {
        history.push(bar)
        if (history.length > candleWindow) history.shift()
        const d = decide({ symbol: "BTC", timeframe: request.timeframe, bar, candles: history, ...account, params })
        return d.operation === "hold" ? hold : check(d)
      }
    }
    // The funding over the range once, as the trials of an optimisation share it.
    const markets = terms.markets.map((m) => ({
      rules: m.rules,
      funding: sharedFunding(m, warmup[0]?.time ?? start, end, () => {})
    }))
    const started = performance.now()
    const results = []
    for (const params of points) {
      const result = yield* runBacktest(
        terms.settings,
        Stream.make([bars]),
        decideEachBar(plain(params)),
        markets,
        [warmup]
      )
      results.push(result.metrics)
    }
    return { metrics: results, seconds: (performance.now() - started) / 1000, bars: bars.length }
  })

/** One optimisation on a fresh instance with `workers` trial workers: its seconds from submission to the end, and its trials. */
const optimise = (request: OptimizationRequest, workers: number, runtime: SandboxRuntimeName) =>
  Effect.gen(function*() {
    const users = yield* Users
    const email = `bench${workers}@example.com`
    yield* users.register({ email, username: `bench${workers}`, password: "correct horse battery" })
    const { session_token } = yield* users.login({ email, password: "correct horse battery" }, "bench")
    const caller = yield* users.authenticate(session_token)
    const created = yield* (yield* Programs).create(caller, { name: "sma", code: program })
    const optimizations = yield* Optimizations
    const started = Date.now()
    const queued = yield* optimizations.submit(caller, created.id, request)
    let current = queued
    // Timed to the end the optimisation records, so the polls can be as rare as a client's: they
    // share the database with the trials, and did a third of its statements at one every 50 ms.
    while (current.status === "queued" || current.status === "running") {
      yield* Effect.sleep("1 second")
      current = yield* optimizations.get(caller, created.id, queued.id)
    }
    const seconds = (Date.parse(current.finished_at!) - started) / 1000
    if (current.status !== "completed") throw new Error(`optimisation ${current.status}: ${current.error}`)
    const trials = yield* optimizations.trials(caller, created.id, queued.id, {
      role: "search",
      sort: "trial",
      order: "asc",
      limit: 500,
      offset: 0
    })
    return { seconds, best: current.result!.best!, trials: trials.trials }
  }).pipe(Effect.scoped, Effect.provide(instance(workers, runtime)))

/** QuickJS, and V8 where isolated-vm loads (the bench runs with --no-node-snapshot). */
const runtimes: ReadonlyArray<SandboxRuntimeName> = ["quickjs", ...("ivm" in loadIsolatedVm() ? ["v8" as const] : [])]

export const run = () =>
  Effect.gen(function*() {
    console.log("| search | runner | trials | seconds | trials/s | bar·trials/s | vs plain |")
    console.log("|---|---|---:|---:|---:|---:|---:|")
    const notes: Array<string> = []
    for (const { label, request } of searches) {
      const space: Space = [
        { name: "fast", kind: "int", min: request.space.fast.min, max: request.space.fast.max, step: 5 },
        { name: "slow", kind: "int", min: request.space.slow.min, max: request.space.slow.max, step: 20 }
      ]
      const trialCount = request.search === "grid" ? 100 : request.budget.trials
      const points = request.search === "grid"
        ? Array.from({ length: 100 }, (_, i) => gridPoint(space, i) as Record<string, number>)
        : propose("random", [
          { name: "fast", kind: "int", min: request.space.fast.min, max: request.space.fast.max, step: 1 },
          { name: "slow", kind: "int", min: request.space.slow.min, max: request.space.slow.max, step: 1 }
        ], {
          seed: 1,
          from: 0,
          count: trialCount,
          observations: []
        }) as ReadonlyArray<Record<string, number>>
      const plain = yield* plainTrials(request as OptimizationRequest, points).pipe(
        Effect.scoped,
        Effect.provide(instance(0))
      )
      const row = (runner: string, seconds: number) =>
        console.log(
          `| ${label} | ${runner} | ${trialCount} | ${seconds.toFixed(2)} | ${(trialCount / seconds).toFixed(1)} | ${
            Math.round(trialCount * plain.bars / seconds).toLocaleString("en")
          } | ${(plain.seconds / seconds).toFixed(2)} |`
        )
      row("plain JavaScript, one after another (baseline)", plain.seconds)
      for (const runtime of runtimes) {
        const runs = []
        for (const workers of [1, 2]) {
          const optimised = yield* optimise(request as OptimizationRequest, workers, runtime)
          runs.push(optimised)
          row(`optimisation in ${runtime}, ${workers} trial worker${workers > 1 ? "s" : ""}`, optimised.seconds)
        }
        const sameTrades = runs.every((r) =>
          r.trials.every((t, i) => t.metrics?.total_trades === plain.metrics[i]!.total_trades)
        )
        notes.push(
          `${label}, ${runtime}: ${plain.bars} bars; workers 1 → 2: ${
            (runs[0]!.seconds / runs[1]!.seconds).toFixed(2)
          }x; each trial's trades equal plain JavaScript's: ${sameTrades}; best ${JSON.stringify(runs[1]!.best.params)}`
        )
      }
    }
    console.log(`\n${notes.join("\n")}`)
  }).pipe(Effect.runPromise)
