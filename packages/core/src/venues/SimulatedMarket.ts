import type { Candle, Funding, OrderBook, Timeframe, Trade } from "./Venue.js"
import { timeframeMillis } from "./Venue.js"

/** The simulated universe: symbol and a reference price in USD. */
export const universe: Readonly<Record<string, number>> = {
  BTC: 65_000,
  ETH: 3_200,
  SOL: 150,
  BNB: 580,
  XRP: 0.6,
  DOGE: 0.15,
  ADA: 0.45,
  AVAX: 35,
  LINK: 15,
  DOT: 7,
  LTC: 80,
  TRX: 0.12,
  ATOM: 9,
  NEAR: 5,
  APT: 9,
  ARB: 1.1,
  OP: 2.5,
  SUI: 1.2,
  INJ: 25,
  TIA: 8,
  SEI: 0.5,
  WIF: 2.5,
  AAVE: 95,
  UNI: 7.5
}

const minute = 60_000
// The largest wick beyond a minute's open and close, as a fraction of price.
const wick = 0.0006
const fundingPeriod = 8 * 3_600_000

// murmur3's finalizer: a cheap integer hash with good avalanche, so nearby inputs look unrelated.
export const mix = (h: number) => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}
export const stringHash = (s: string) => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return mix(h)
}
/** A uniform number in [0, 1) determined by the key and the integers given. */
export const uniform = (key: number, a: number, b = 0) => mix(key ^ mix(a + mix(b + 0x9e3779b9))) / 4_294_967_296

// Smooth noise at several scales: slow trends, daily swings, hourly wiggles.
const scales = [
  { period: 120 * 86_400_000, amplitude: 0.25 },
  { period: 30 * 86_400_000, amplitude: 0.12 },
  { period: 7 * 86_400_000, amplitude: 0.06 },
  { period: 86_400_000, amplitude: 0.025 },
  { period: 6 * 3_600_000, amplitude: 0.01 },
  { period: 3_600_000, amplitude: 0.004 }
]

/**
 * Smooth noise in [-1, 1] at one scale: random values at the period's boundaries, eased between.
 * The boundary values are remembered, since consecutive minutes almost always share them.
 */
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

// Eight significant digits: enough for any price here, and no float noise on the wire.
const round = (x: number) => Number(x.toPrecision(8))

/**
 * One symbol's market as a pure function of seed, symbol and time. Prices are defined on minute
 * boundaries; every coarser candle is aggregated from minute candles, so timeframes agree exactly.
 * `basis` is the venue's small, constant premium over the shared path.
 */
export const simulatedSymbol = (seed: number, symbol: string, venue: string) => {
  const reference = universe[symbol]
  if (reference === undefined) return undefined
  const key = mix(seed ^ stringHash(symbol))
  const basis = 1 + (uniform(mix(key ^ stringHash(venue)), 7) - 0.5) * 0.001
  const coinsPerMinute = 1_000_000 / reference

  const noises = scales.map(({ amplitude, period }) => ({ amplitude, noise: smoothNoise(key, period) }))
  const dailyNoise = smoothNoise(key, 86_400_000)

  /** The price at minute boundary `t`. */
  const priceAt = (t: number) => {
    let log = (uniform(key, t / minute, 1) - 0.5) * 0.0016
    for (const { amplitude, noise } of noises) log += amplitude * noise(t)
    return reference * basis * Math.exp(log)
  }

  /** Open, high, low, close, volume (coins) and quote volume of the minutes in `[start, end)`. */
  const aggregate = (start: number, end: number) => {
    let open = priceAt(start)
    const bar = { open, high: -Infinity, low: Infinity, close: open, volume: 0, quote: 0 }
    // The hot loop of the simulation: a daily bar is 1440 minute candles.
    for (let m = start; m < end; m += minute) {
      const close = priceAt(m + minute)
      const n = m / minute
      const volume = coinsPerMinute * (0.3 + 1.4 * uniform(key, n, 4))
      bar.high = Math.max(bar.high, Math.max(open, close) * (1 + uniform(key, n, 2) * wick))
      bar.low = Math.min(bar.low, Math.min(open, close) * (1 - uniform(key, n, 3) * wick))
      bar.volume += volume
      bar.quote += volume * close
      bar.close = open = close
    }
    return bar
  }

  /** Closed candles of the timeframe with open time in `[start, end)` and close time at most `now`. */
  const candles = (timeframe: Timeframe, start: number, end: number, now: number): Array<Candle> => {
    const step = timeframeMillis[timeframe]
    const out: Array<Candle> = []
    for (let t = Math.ceil(start / step) * step; t < end && t + step <= now; t += step) {
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

  /** The last traded price at `now`: the close of the last closed minute. */
  const price = (now: number) => priceAt(Math.floor(now / minute) * minute)

  const funding = (now: number): Funding => {
    const period = Math.floor(now / fundingPeriod)
    // Skewed slightly positive, as perpetual funding usually is.
    return { rate: round((uniform(key, period, 5) - 0.4) * 0.0002), next_funding_time: (period + 1) * fundingPeriod }
  }

  const openInterest = (now: number) =>
    round((200_000_000 / reference) * (1 + 0.3 * dailyNoise(Math.floor(now / minute) * minute)))

  const depth = (now: number, levels: number): OrderBook => {
    const mid = price(now)
    const tick = mid * 0.0001
    const second = Math.floor(now / 1000)
    const level = (i: number, side: number) =>
      [
        round(mid + side * (0.5 + i) * tick),
        round(coinsPerMinute * 0.05 * (0.2 + 2 * uniform(key, second, 100 * side + i)))
      ] as const
    return {
      bids: Array.from({ length: levels }, (_, i) => level(i, -1)),
      asks: Array.from({ length: levels }, (_, i) => level(i, 1))
    }
  }

  /** One trade per second, newest first. */
  const trades = (now: number, limit: number): Array<Trade> =>
    Array.from({ length: limit }, (_, i) => {
      const second = Math.floor(now / 1000) - i
      const at = second * 1000
      return {
        time: at,
        price: round(priceAt(Math.floor(at / minute) * minute) * (1 + (uniform(key, second, 6) - 0.5) * 0.0004)),
        size: round(coinsPerMinute * 0.01 * (0.1 + uniform(key, second, 7))),
        side: uniform(key, second, 8) < 0.5 ? "buy" : "sell"
      }
    })

  /** Price, change (percent) and quote volume over the 24 hours before `now`. */
  const day = (now: number) => {
    const end = Math.floor(now / minute) * minute
    const bar = aggregate(end - 86_400_000, end)
    return {
      price: round(bar.close),
      change_24h: round((bar.close / bar.open - 1) * 100),
      volume_24h: round(bar.quote)
    }
  }

  return { symbol, reference, price, candles, funding, openInterest, depth, trades, day }
}
export type SimulatedSymbol = NonNullable<ReturnType<typeof simulatedSymbol>>
