// The simulated market's speed: the model of `packages/core/src/venues/SimulatedMarket.ts` against
// the one it replaced (issue 27), kept below only for this comparison. Both answer the same requests
// in the same process, in turns; the rate is minute candles aggregated per second.
import { simulatedSymbol, universe } from "../packages/core/src/venues/SimulatedMarket.js"
import { type Candle, type Timeframe, timeframeMillis } from "../packages/core/src/venues/Venue.js"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 3)
const rounds = 3
const minute = 60_000
const day = 86_400_000
const start = Date.UTC(2025, 6, 1)

/** The previous model, price and candles only: i.i.d. minute noise on a bounded sum of smooth noise. */
const previousModel = (seed: number, symbol: string, venue: string) => {
  const reference = universe[symbol]!
  const mix = (h: number) => {
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
    return (h ^ (h >>> 16)) >>> 0
  }
  const stringHash = (s: string) => {
    let h = 0x811c9dc5
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
    return mix(h)
  }
  const uniform = (key: number, a: number, b = 0) => mix(key ^ mix(a + mix(b + 0x9e3779b9))) / 4_294_967_296
  const smoothNoise = (key: number, period: number) => {
    let bucket = NaN
    let a = 0
    let b = 0
    return (t: number) => {
      const x = t / period
      const i = Math.floor(x)
      if (i !== bucket) {
        bucket = i
        a = uniform(key, i, period) * 2 - 1
        b = uniform(key, i + 1, period) * 2 - 1
      }
      const f = x - i
      return a + (b - a) * f * f * (3 - 2 * f)
    }
  }
  const scales = [
    { period: 120 * day, amplitude: 0.25 },
    { period: 30 * day, amplitude: 0.12 },
    { period: 7 * day, amplitude: 0.06 },
    { period: day, amplitude: 0.025 },
    { period: 6 * 3_600_000, amplitude: 0.01 },
    { period: 3_600_000, amplitude: 0.004 }
  ]
  const round = (x: number) => Number(x.toPrecision(8))
  const key = mix(seed ^ stringHash(symbol))
  const basis = 1 + (uniform(mix(key ^ stringHash(venue)), 7) - 0.5) * 0.001
  const coinsPerMinute = 1_000_000 / reference
  const noises = scales.map(({ amplitude, period }) => ({ amplitude, noise: smoothNoise(key, period) }))
  const priceAt = (t: number) => {
    let log = (uniform(key, t / minute, 1) - 0.5) * 0.0016
    for (const { amplitude, noise } of noises) log += amplitude * noise(t)
    return reference * basis * Math.exp(log)
  }
  const aggregate = (from: number, to: number) => {
    let open = priceAt(from)
    const bar = { open, high: -Infinity, low: Infinity, close: open, volume: 0, quote: 0 }
    for (let m = from; m < to; m += minute) {
      const close = priceAt(m + minute)
      const n = m / minute
      const volume = coinsPerMinute * (0.3 + 1.4 * uniform(key, n, 4))
      bar.high = Math.max(bar.high, Math.max(open, close) * (1 + uniform(key, n, 2) * 0.0006))
      bar.low = Math.min(bar.low, Math.min(open, close) * (1 - uniform(key, n, 3) * 0.0006))
      bar.volume += volume
      bar.quote += volume * close
      bar.close = open = close
    }
    return bar
  }
  const candles = (timeframe: Timeframe, from: number, to: number, now: number): Array<Candle> => {
    const step = timeframeMillis[timeframe]
    const out: Array<Candle> = []
    for (let t = Math.ceil(from / step) * step; t < to && t + step <= now; t += step) {
      const bar = aggregate(t, t + step)
      out.push({
        time: t,
        open: round(bar.open),
        high: round(bar.high),
        low: round(bar.low),
        close: round(bar.close),
        volume: round(bar.volume)
      })
    }
    return out
  }
  return { candles }
}

type Model = (seed: number, symbol: string) => {
  readonly candles: (timeframe: Timeframe, start: number, end: number, now: number) => Array<Candle>
}
const models: ReadonlyArray<{ readonly label: string; readonly make: Model }> = [
  { label: "previous", make: (seed, symbol) => previousModel(seed, symbol, "venue1") },
  { label: "new", make: (seed, symbol) => simulatedSymbol(seed, symbol, "venue1")! }
]

/**
 * Each case: its request, for how many symbols, and whether each run starts on a new seed. A new
 * seed finds nothing cached, as a server's first request for a period does; the same seed again is
 * a repeated request (the new model keeps a path's recent days, the previous one kept nothing).
 */
const cases: ReadonlyArray<
  {
    readonly label: string
    readonly timeframe: Timeframe
    readonly days: number
    readonly symbols: number
    readonly cold: boolean
  }
> = [
  { label: "a year of BTC 1h candles, first request", timeframe: "1h", days: 365, symbols: 1, cold: true },
  { label: "a year of BTC 1d candles, first request", timeframe: "1d", days: 365, symbols: 1, cold: true },
  {
    label: "30 days of 1h candles of all 24 symbols, first request",
    timeframe: "1h",
    days: 30,
    symbols: 24,
    cold: true
  },
  { label: "the same, repeated (the ranking's requests)", timeframe: "1h", days: 30, symbols: 24, cold: false },
  { label: "a day of BTC 1m candles, repeated", timeframe: "1m", days: 1, symbols: 1, cold: false }
]

let nextSeed = 1_000
/** Minute candles aggregated per second over `seconds`, one request (a symbol's candles) after another. */
const measure = (make: Model, timeframe: Timeframe, days: number, symbols: number, cold: boolean) => {
  const names = Object.keys(universe).slice(0, symbols)
  const request = (seed: number) => {
    for (const symbol of names) make(seed, symbol).candles(timeframe, start, start + days * day, Infinity)
  }
  let minutes = 0
  request(7)
  const started = performance.now()
  while (performance.now() - started < seconds * 1000) {
    request(cold ? nextSeed++ : 7)
    minutes += days * 1440 * symbols
  }
  return minutes / ((performance.now() - started) / 1000)
}

export const run = async () => {
  const format = (n: number) => Math.round(n).toLocaleString("en")
  console.log(
    `Candles from ${
      new Date(start).toISOString().slice(0, 10)
    }; best of ${rounds} runs of ${seconds} s in turns, after a warm-up\n`
  )
  console.log("| request | previous model, minutes/s (best) | new model, minutes/s (best) | new / previous |")
  console.log("|---|---:|---:|---:|")
  for (const { cold, days, label, symbols, timeframe } of cases) {
    for (const model of models) measure(model.make, timeframe, days, symbols, cold)
    const runs = models.map(() => [] as Array<number>)
    for (let round = 0; round < rounds; round++) {
      models.forEach((model, i) => runs[i]!.push(measure(model.make, timeframe, days, symbols, cold)))
    }
    const [previous, next] = runs.map((r) => Math.max(...r))
    console.log(`| ${label} | ${format(previous!)} | ${format(next!)} | ${(next! / previous!).toFixed(2)} |`)
  }
}
