import { acklam } from "../stats/Normal.js"
import { toSignificant } from "../stats/Significant.js"
import type { Candle, Funding, FundingRate, OrderBook, Timeframe, Trade } from "./Venue.js"
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

/** Each symbol's annualised volatility: about what each showed in 2023-2025. */
const volatility: Readonly<Record<string, number>> = {
  BTC: 0.55,
  ETH: 0.7,
  SOL: 0.9,
  BNB: 0.6,
  XRP: 0.85,
  DOGE: 1,
  ADA: 0.85,
  AVAX: 0.95,
  LINK: 0.9,
  DOT: 0.85,
  LTC: 0.8,
  TRX: 0.5,
  ATOM: 0.85,
  NEAR: 0.95,
  APT: 0.95,
  ARB: 1,
  OP: 1,
  SUI: 1.1,
  INJ: 1.1,
  TIA: 1.1,
  SEI: 1.1,
  WIF: 1.4,
  AAVE: 0.9,
  UNI: 0.9
}

/** The correlation of any two symbols' returns through the market factor, unless configured. */
export const defaultSimulationCorrelation = 0.8

const minute = 60_000
const hour = 3_600_000
const day = 86_400_000
const minutesPerDay = 1440
// Every path is at its reference price at this midnight and walks forward and backward from it,
// over a span of days whose walk is bounded in time and memory (no candles outside it).
const anchorDay = Date.UTC(2025, 0, 1) / day
const firstDay = Date.UTC(1960, 0, 1) / day
const lastDay = Date.UTC(2100, 0, 1) / day
const fundingPeriod = 8 * hour
const golden = 0x9e3779b9
const two32 = 4_294_967_296

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
export const uniform = (key: number, a: number, b = 0) => mix(key ^ mix(a + mix(b + golden))) / two32

/**
 * The hash of stream `tag` at integer `a`; `next` derives further independent-looking hashes from it.
 * `a` is hashed before it meets the stream, so two streams never repeat each other at an offset.
 */
const hashed = (key: number, a: number, tag: number) => mix((key ^ tag) + mix(a))
const next = (h: number) => mix(h ^ golden)
/** A uniform number in (0, 1] from a hash: safe under a logarithm. */
const positive = (h: number) => (h + 1) / two32
/** A standard normal from a hash: the inverse normal distribution function at a uniform in (0, 1). */
const gaussian = (h: number) => acklam((h + 0.5) / two32)

// Stream tags, one per kind of draw, so no two draws share a hash.
const tag = (n: number) => mix(n ^ 0x5bd1e995)
const shockTag = tag(1)
const stepTag = tag(2)
const mixingTag = tag(3)
const bridgeTag = tag(4)
const wickTag = tag(5)
const volumeTag = tag(6)
const fundingTag = tag(7)
/** The knots of scale `i` of the daily regimes, and (from 8 on) of the intraday ones. */
const knotTags = Array.from({ length: 16 }, (_, i) => tag(16 + i))

interface Scale {
  readonly period: number
  readonly amplitude: number
}

// Log-volatility at several time scales (a superposition of slow and fast regimes): the market's
// regimes set every day's variance; each symbol adds smaller regimes of its own.
const marketScales: ReadonlyArray<Scale> = [
  { period: 120 * day, amplitude: 0.25 },
  { period: 30 * day, amplitude: 0.2 },
  { period: 7 * day, amplitude: 0.15 },
  { period: 2 * day, amplitude: 0.1 }
]
const symbolScales: ReadonlyArray<Scale> = [
  { period: 60 * day, amplitude: 0.15 },
  { period: 10 * day, amplitude: 0.1 }
]
// Inside a day the variance is shared out by faster market regimes and fat-tailed minute draws.
const intradayScales: ReadonlyArray<Scale> = [
  { period: 6 * hour, amplitude: 0.3 },
  { period: hour, amplitude: 0.25 },
  { period: 15 * minute, amplitude: 0.2 }
]
// Open interest's own slow wander around what price and trend imply.
const interestScales: ReadonlyArray<Scale> = [{ period: 3 * day, amplitude: 0.1 }]
// The day's own log-volatility shock, independent from day to day.
const marketShock = 0.15
const symbolShock = 0.1
// Degrees of freedom of the Student-t minute draws; a single minute's variance share is capped.
const tailMixingCap = 300

/**
 * Log-volatility at `t` from Gaussian knots at each scale's period boundaries, eased between, less
 * its variance, so that `exp(2 * h)` has mean 1 at every time.
 */
const logVolatility = (key: number, scales: ReadonlyArray<Scale>, t: number) => {
  let h = 0
  for (let i = 0; i < scales.length; i++) {
    const { amplitude, period } = scales[i]!
    const x = t / period
    const k = Math.floor(x)
    const f = x - k
    const s = f * f * (3 - 2 * f)
    const a = gaussian(hashed(key, k, knotTags[i]!))
    const b = gaussian(hashed(key, k + 1, knotTags[i]!))
    h += amplitude * (a + (b - a) * s) - amplitude * amplitude * ((1 - s) * (1 - s) + s * s)
  }
  return h
}

/**
 * The same multi-scale noise, unnormalised, for one minute after another: each scale remembers its
 * knots, since consecutive minutes almost always share them.
 */
const intradayActivity = (key: number) => {
  const buckets = intradayScales.map(() => ({ index: NaN, a: 0, b: 0 }))
  return (t: number) => {
    let h = 0
    for (let i = 0; i < intradayScales.length; i++) {
      const { amplitude, period } = intradayScales[i]!
      const bucket = buckets[i]!
      const x = t / period
      const k = Math.floor(x)
      if (k !== bucket.index) {
        bucket.index = k
        bucket.a = gaussian(hashed(key, k, knotTags[8 + i]!))
        bucket.b = gaussian(hashed(key, k + 1, knotTags[8 + i]!))
      }
      const f = x - k
      h += amplitude * (bucket.a + (bucket.b - bucket.a) * f * f * (3 - 2 * f))
    }
    return Math.exp(2 * h)
  }
}

/**
 * A Student-t (4 degrees of freedom) minute as a normal with variance `2 / chi2(4)`, the chi-square
 * drawn as `-2 ln(u1 u2)`: a normal variance mixture, so the day's bridge stays Gaussian.
 */
const tailMixing = (key: number, minuteIndex: number) => {
  const h = hashed(key, minuteIndex, mixingTag)
  return Math.min(tailMixingCap, -1 / Math.log(positive(h) * positive(next(h))))
}

/**
 * The running sum of the days' increments from the anchor: at `d`, the sum over the days from the
 * anchor up to `d` (negative for the days before it), constant outside the span. Filled outward from
 * the anchor in order, so the same double whatever the order of access.
 */
const walk = (increment: (d: number) => number) => {
  const ahead = [0]
  const behind = [0]
  return (d: number) => {
    const k = Math.min(lastDay, Math.max(firstDay, d)) - anchorDay
    if (k >= 0) {
      for (let j = ahead.length; j <= k; j++) ahead.push(ahead[j - 1]! + increment(anchorDay + j - 1))
      return ahead[k]!
    }
    for (let j = behind.length; j <= -k; j++) behind.push(behind[j - 1]! - increment(anchorDay - j))
    return behind[-k]!
  }
}

/** A small least-recently-used map; the last key asked for is answered without touching the map. */
const lru = <K, V>(capacity: number) => {
  const entries = new Map<K, V>()
  let lastKey: K | undefined
  let lastValue: V | undefined
  return (key: K, make: () => V): V => {
    if (key === lastKey) return lastValue!
    let value = entries.get(key)
    if (value !== undefined) {
      entries.delete(key)
    } else {
      value = make()
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
    }
    entries.set(key, value)
    lastKey = key
    lastValue = value
    return value
  }
}

const suffix = new Float64Array(minutesPerDay + 1)

/**
 * A day's minute steps of a Gaussian walk whose day total is `total` and whose minute variances are
 * `variance * shares[n] / sum(shares)`: each step drawn conditionally on what remains of the total
 * (a Brownian bridge in variance time; exact Gaussian conditioning). Writes the walk's value at the
 * start of each minute to `path` and each minute's variance to `variances`.
 */
const bridge = (
  key: number,
  firstMinute: number,
  shares: Float64Array,
  variance: number,
  total: number,
  path: Float64Array,
  variances: Float64Array
) => {
  suffix[minutesPerDay] = 0
  for (let n = minutesPerDay - 1; n >= 0; n--) suffix[n] = suffix[n + 1]! + shares[n]!
  const scale = variance / suffix[0]!
  let value = 0
  let remaining = total
  for (let n = 0; n < minutesPerDay; n++) {
    path[n] = value
    const share = shares[n]!
    variances[n] = scale * share
    const rest = suffix[n]!
    const step = n === minutesPerDay - 1 ?
      remaining :
      (remaining * share) / rest +
      Math.sqrt((scale * share * suffix[n + 1]!) / rest) * gaussian(hashed(key, firstMinute + n, bridgeTag))
    value += step
    remaining -= step
  }
}

interface MarketDay {
  /** The market factor's walk at the start of each minute, from 0 at midnight. */
  readonly path: Float64Array
  readonly variances: Float64Array
  /** The intraday regime each minute, shared by every symbol's own moves. */
  readonly activity: Float64Array
}

/** The market factor of one seed: a walk in variance time, a day at a time, with unit variance per day on average. */
const makeMarket = (seed: number) => {
  const key = mix(seed ^ stringHash("market"))
  const activityAt = intradayActivity(key)
  const dayVariance = (d: number) => {
    const shock = marketShock * gaussian(hashed(key, d, shockTag))
    return Math.exp(2 * (logVolatility(key, marketScales, d * day + day / 2) + shock - marketShock * marketShock))
  }
  const increment = (d: number) => Math.sqrt(dayVariance(d)) * gaussian(hashed(key, d, stepTag))
  const days = lru<number, MarketDay>(32)
  const shares = new Float64Array(minutesPerDay)
  const dayOf = (d: number) =>
    days(d, () => {
      const first = d * minutesPerDay
      const activity = new Float64Array(minutesPerDay)
      for (let n = 0; n < minutesPerDay; n++) {
        activity[n] = activityAt((first + n) * minute)
        shares[n] = activity[n]! * tailMixing(key, first + n)
      }
      const path = new Float64Array(minutesPerDay)
      const variances = new Float64Array(minutesPerDay)
      bridge(key, first, shares, dayVariance(d), increment(d), path, variances)
      return { path, variances, activity }
    })
  return { dayVariance, cumulative: walk(increment), dayOf }
}
type Market = ReturnType<typeof makeMarket>

/** A day's bars of one width (minutes or hours), oldest first, without the venue's basis. */
interface Bars {
  /** The price at the start of each bar, and at the next midnight last. */
  readonly prices: Float64Array
  /** Each bar's highest and lowest log price. */
  readonly highs: Float64Array
  readonly lows: Float64Array
  /** Volume in coins, and in USD (each minute's volume at its close). */
  readonly volumes: Float64Array
  readonly quotes: Float64Array
}

const bars = (count: number): Bars => ({
  prices: new Float64Array(count + 1),
  highs: new Float64Array(count),
  lows: new Float64Array(count),
  volumes: new Float64Array(count),
  quotes: new Float64Array(count)
})

/** The day's hours from its minutes: the same extremes, so hourly and finer candles agree exactly. */
const hoursOf = (minutes: Bars) => {
  const out = bars(24)
  for (let k = 0; k < 24; k++) {
    let high = -Infinity
    let low = Infinity
    let volume = 0
    let quote = 0
    for (let n = k * 60; n < (k + 1) * 60; n++) {
      if (minutes.highs[n]! > high) high = minutes.highs[n]!
      if (minutes.lows[n]! < low) low = minutes.lows[n]!
      volume += minutes.volumes[n]!
      quote += minutes.quotes[n]!
    }
    out.prices[k] = minutes.prices[k * 60]!
    out.highs[k] = high
    out.lows[k] = low
    out.volumes[k] = volume
    out.quotes[k] = quote
  }
  out.prices[24] = minutes.prices[minutesPerDay]!
  return out
}

/**
 * One symbol's log price: `log(reference) + a * (beta * market + sqrt(1 - beta^2) * own)`, both
 * walks with unit daily variance on average, `beta^2` the correlation and `a` the daily volatility.
 */
const makePath = (market: Market, seed: number, symbol: string, reference: number, correlation: number) => {
  const key = mix(seed ^ stringHash(symbol))
  const scale = (volatility[symbol] ?? 1) / Math.sqrt(365)
  const beta = scale * Math.sqrt(correlation)
  const gamma = scale * Math.sqrt(1 - correlation)
  const typicalStep = scale / Math.sqrt(minutesPerDay)
  const coinsPerMinute = 1_000_000 / reference
  const logReference = Math.log(reference)
  const dayVariance = (d: number) => {
    const shock = symbolShock * gaussian(hashed(key, d, shockTag))
    const own = logVolatility(key, symbolScales, d * day + day / 2) + shock - symbolShock * symbolShock
    return market.dayVariance(d) * Math.exp(2 * own)
  }
  const increment = (d: number) => Math.sqrt(dayVariance(d)) * gaussian(hashed(key, d, stepTag))
  const cumulative = walk(increment)
  /** The log price at midnight starting day `d`. */
  const logAt = (d: number) => logReference + beta * market.cumulative(d) + gamma * cumulative(d)

  const shares = new Float64Array(minutesPerDay)
  const own = new Float64Array(minutesPerDay)
  const ownVariances = new Float64Array(minutesPerDay)
  const minuteDays = lru<number, Bars>(4)
  const hourDays = lru<number, Bars>(128)
  const minutes = (d: number) =>
    minuteDays(d, () => {
      const first = d * minutesPerDay
      const m = market.dayOf(d)
      for (let n = 0; n < minutesPerDay; n++) shares[n] = m.activity[n]! * tailMixing(key, first + n)
      bridge(key, first, shares, dayVariance(d), increment(d), own, ownVariances)
      const out = bars(minutesPerDay)
      const start = logAt(d)
      const end = logAt(d + 1)
      let log = start
      out.prices[0] = Math.exp(start)
      for (let n = 0; n < minutesPerDay; n++) {
        const after = n === minutesPerDay - 1 ? end : start + beta * m.path[n + 1]! + gamma * own[n + 1]!
        const close = Math.exp(after)
        out.prices[n + 1] = close
        // The minute's extremes: a Brownian bridge from 0 to `move` with variance v has its maximum at
        // (move + sqrt(move^2 + 2 v E)) / 2 with E exponential, and its minimum likewise. The two
        // exponentials split one gamma(2) draw at a uniform point: one logarithm for both.
        const move = after - log
        const v = beta * beta * m.variances[n]! + gamma * gamma * ownVariances[n]!
        const h = hashed(key, first + n, wickTag)
        const h2 = next(h)
        const both = -2 * v * Math.log(positive(h) * positive(h2))
        const split = positive(next(h2))
        out.highs[n] = log + (move + Math.sqrt(move * move + both * split)) / 2
        out.lows[n] = log + (move - Math.sqrt(move * move + both * (1 - split))) / 2
        // Volume follows activity: the minute's expected and realised size of move.
        const activity = 0.4 * Math.sqrt(v) + 0.5 * Math.abs(move)
        const noise = 0.6 + 0.8 * positive(hashed(key, first + n, volumeTag))
        const volume = coinsPerMinute * noise * (0.2 + activity / typicalStep)
        out.volumes[n] = volume
        out.quotes[n] = volume * close
        log = after
      }
      return out
    })
  const hours = (d: number) => hourDays(d, () => hoursOf(minutes(d)))
  return { logAt, minutes, hours }
}
type Path = ReturnType<typeof makePath>

// Paths are shared by every instance (both venues, each request): the walks and recent days are
// computed once. A server has one seed and correlation, so these stay small.
const markets = lru<number, Market>(8)
const paths = lru<string, Path>(48)

// Eight significant digits: enough for any price here, and no float noise on the wire.
const round = (x: number) => toSignificant(x, 8)

export const simulatedSymbol = (
  seed: number,
  symbol: string,
  venue: string,
  correlation = defaultSimulationCorrelation
) => {
  const reference = universe[symbol]
  if (reference === undefined) return undefined
  const key = mix(seed ^ stringHash(symbol))
  const basis = 1 + (uniform(mix(key ^ stringHash(venue)), 7) - 0.5) * 0.001
  const coinsPerMinute = 1_000_000 / reference
  const path = paths(
    `${seed}/${symbol}/${correlation}`,
    () => makePath(markets(seed, () => makeMarket(seed)), seed, symbol, reference, correlation)
  )
  const interestKey = mix(key ^ stringHash("open interest"))

  /** A time inside the span, with the day before it: what the answers at `now` read from. */
  const inSpan = (t: number) => Math.min(Math.max(t, (firstDay + 1) * day), lastDay * day - minute)
  /** The price at minute boundary `t`. */
  const priceAt = (t: number) => {
    const n = inSpan(t) / minute
    const d = Math.floor(n / minutesPerDay)
    return path.minutes(d).prices[n - d * minutesPerDay]! * basis
  }
  const logPriceAt = (t: number) => Math.log(priceAt(Math.floor(t / minute) * minute) / basis)
  /** The log price eased between midnights: a cheap trailing reference for funding and open interest. */
  const smoothLogAt = (t: number) => {
    const x = t / day
    const d = Math.floor(x)
    const before = path.logAt(d)
    return before + (path.logAt(d + 1) - before) * (x - d)
  }

  /**
   * Open, high, low, close, volume (coins) and quote volume of the minutes in `[start, end)`, read
   * from the days' hourly bars when whole hours are asked for, else from their minute bars.
   */
  const aggregate = (start: number, end: number) => {
    const width = start % hour === 0 && end % hour === 0 ? hour : minute
    const perDay = day / width
    const bar = { open: 0, high: -Infinity, low: Infinity, close: 0, volume: 0, quote: 0 }
    const last = end / width
    for (let i = start / width; i < last;) {
      const d = Math.floor(i / perDay)
      const { highs, lows, prices, quotes, volumes } = width === hour ? path.hours(d) : path.minutes(d)
      const from = i - d * perDay
      const to = Math.min(perDay, last - d * perDay)
      if (i * width === start) bar.open = prices[from]!
      for (let n = from; n < to; n++) {
        if (highs[n]! > bar.high) bar.high = highs[n]!
        if (lows[n]! < bar.low) bar.low = lows[n]!
        bar.volume += volumes[n]!
        bar.quote += quotes[n]!
      }
      bar.close = prices[to]!
      i = d * perDay + to
    }
    bar.open *= basis
    bar.high = Math.exp(bar.high) * basis
    bar.low = Math.exp(bar.low) * basis
    bar.close *= basis
    bar.quote *= basis
    return bar
  }

  /** Closed candles of the timeframe with open time in `[start, end)` and close time at most `now`. */
  const candles = (timeframe: Timeframe, start: number, end: number, now: number): Array<Candle> => {
    const step = timeframeMillis[timeframe]
    const out: Array<Candle> = []
    const last = Math.min(now, lastDay * day)
    for (let t = Math.ceil(Math.max(start, firstDay * day) / step) * step; t < end && t + step <= last; t += step) {
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

  // Funding follows the premium, which follows the last day's move: a base of 0.01 % per 8 hours
  // (positive on average, as perpetual funding is) plus a share of the trailing return and noise.
  const funding = (now: number): Funding => {
    const period = Math.floor(inSpan(now) / fundingPeriod)
    const start = period * fundingPeriod
    const trailing = logPriceAt(start) - smoothLogAt(start - day)
    const rate = 0.0001 + 0.004 * trailing + 0.00003 * gaussian(hashed(key, period, fundingTag))
    return { rate: round(Math.max(-0.003, Math.min(0.003, rate))), next_funding_time: (period + 1) * fundingPeriod }
  }

  /** The payments at the funding times in `[start, end)`: each pays the rate of the period it ends. */
  const fundingHistory = (start: number, end: number): Array<FundingRate> => {
    const out: Array<FundingRate> = []
    const first = Math.max(start, (firstDay + 1) * day + 1)
    const last = Math.min(end, lastDay * day)
    for (let t = Math.ceil(first / fundingPeriod) * fundingPeriod; t < last; t += fundingPeriod) {
      out.push({ time: t, rate: funding(t - 1).rate })
    }
    return out
  }

  // Open interest (coins) grows with the price level and with the last week's trend, as longs pile in.
  const openInterest = (now: number) => {
    const t = Math.floor(inSpan(now) / minute) * minute
    const log = logPriceAt(t)
    const level = Math.exp(0.5 * (log - Math.log(reference)))
    const trend = Math.exp(2 * (log - smoothLogAt(t - 7 * day)))
    return round((200_000_000 / reference) * level * trend * Math.exp(logVolatility(interestKey, interestScales, t)))
  }

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
  const day24h = (now: number) => {
    const end = Math.floor(inSpan(now) / minute) * minute
    const bar = aggregate(end - day, end)
    return {
      price: round(bar.close),
      change_24h: round((bar.close / bar.open - 1) * 100),
      volume_24h: round(bar.quote)
    }
  }

  return { symbol, reference, price, candles, funding, fundingHistory, openInterest, depth, trades, day: day24h }
}
export type SimulatedSymbol = NonNullable<ReturnType<typeof simulatedSymbol>>
