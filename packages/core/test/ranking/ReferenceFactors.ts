import type { Candle } from "../../src/venues/Venue.js"

/**
 * Each candle factor written again from its textbook formula, in plain TypeScript loops over the
 * candles, independently of the `ta` source: the tests check the library against these, and the
 * ranking bench uses them as its baseline. Null where the formula is undefined or data too short.
 */
type Reference = (candles: ReadonlyArray<Candle>) => number | null

const closes = (candles: ReadonlyArray<Candle>) => candles.map((c) => c.close)
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
const typical = (c: Candle) => (c.high + c.low + c.close) / 3

const rsi = (period: number): Reference => (candles) => {
  const x = closes(candles)
  if (x.length <= period) return null
  let gain = 0, loss = 0
  for (let i = 1; i <= period; i++) {
    const d = x[i]! - x[i - 1]!
    gain += Math.max(d, 0)
    loss += Math.max(-d, 0)
  }
  gain /= period
  loss /= period
  for (let i = period + 1; i < x.length; i++) {
    const d = x[i]! - x[i - 1]!
    gain = (gain * (period - 1) + Math.max(d, 0)) / period
    loss = (loss * (period - 1) + Math.max(-d, 0)) / period
  }
  return loss === 0 ? 100 : 100 - 100 / (1 + gain / loss)
}

const roc = (period: number): Reference => (candles) => {
  const n = candles.length
  if (n <= period) return null
  return (candles[n - 1]!.close / candles[n - 1 - period]!.close - 1) * 100
}

const stochK = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const window = candles.slice(-period)
  const high = Math.max(...window.map((c) => c.high)), low = Math.min(...window.map((c) => c.low))
  return high === low ? null : (candles.at(-1)!.close - low) / (high - low) * 100
}

const smaOf = (x: ReadonlyArray<number>, period: number) => mean(x.slice(-period))

const priceVsSma = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  return (candles.at(-1)!.close / smaOf(closes(candles), period) - 1) * 100
}

/** EMA seeded with the first value, over the whole series. */
const emaSeries = (x: ReadonlyArray<number>, period: number) => {
  const k = 2 / (period + 1)
  const out: Array<number> = []
  for (let i = 0; i < x.length; i++) out.push(i === 0 ? x[0]! : x[i]! * k + out[i - 1]! * (1 - k))
  return out
}

const emaSpread = (fast: number, slow: number): Reference => (candles) => {
  if (candles.length < slow) return null
  const x = closes(candles)
  return (emaSeries(x, fast).at(-1)! / emaSeries(x, slow).at(-1)! - 1) * 100
}

const macdHistogram: Reference = (candles) => {
  if (candles.length < 26 + 9 - 1) return null
  const x = closes(candles)
  const f = emaSeries(x, 12), s = emaSeries(x, 26)
  const line = x.map((_, i) => f[i]! - s[i]!).slice(25)
  return (line.at(-1)! - emaSeries(line, 9).at(-1)!) / x.at(-1)! * 100
}

/** ADX from +DI and -DI, with Wilder's smoothing of the true range and the directional moves. */
const adx = (period: number): Reference => (candles) => {
  if (candles.length < 2 * period) return null
  let tr = 0, plus = 0, minus = 0
  const dxs: Array<number> = []
  for (let i = 1; i < candles.length; i++) {
    const c = candles[i]!, p = candles[i - 1]!
    const up = c.high - p.high, down = p.low - c.low
    const t = Math.max(c.high - c.low, Math.abs(c.high - p.close), Math.abs(c.low - p.close))
    const dp = up > down && up > 0 ? up : 0, dm = down > up && down > 0 ? down : 0
    if (i <= period) {
      tr += t
      plus += dp
      minus += dm
    } else {
      tr = tr - tr / period + t
      plus = plus - plus / period + dp
      minus = minus - minus / period + dm
    }
    if (i >= period) {
      const diPlus = tr === 0 ? 0 : 100 * plus / tr, diMinus = tr === 0 ? 0 : 100 * minus / tr
      dxs.push(diPlus + diMinus === 0 ? 0 : 100 * Math.abs(diPlus - diMinus) / (diPlus + diMinus))
    }
  }
  let a = mean(dxs.slice(0, period))
  for (const dx of dxs.slice(period)) a = (a * (period - 1) + dx) / period
  return a
}

/** Least-squares slope by the normal equations. */
const lsSlope = (y: ReadonlyArray<number>) => {
  const n = y.length
  let sx = 0, sy = 0, sxy = 0, sxx = 0
  for (let i = 0; i < n; i++) {
    sx += i
    sy += y[i]!
    sxy += i * y[i]!
    sxx += i * i
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx)
}

const linregSlope = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const y = closes(candles).slice(-period)
  return lsSlope(y) / mean(y) * 100
}

const atrPct = (period: number): Reference => (candles) => {
  if (candles.length <= period) return null
  const tr = candles.slice(1).map((c, i) =>
    Math.max(c.high - c.low, Math.abs(c.high - candles[i]!.close), Math.abs(c.low - candles[i]!.close))
  )
  let a = mean(tr.slice(0, period))
  for (const t of tr.slice(period)) a = (a * (period - 1) + t) / period
  return a / candles.at(-1)!.close * 100
}

const bands = (candles: ReadonlyArray<Candle>, period: number) => {
  const x = closes(candles).slice(-period)
  const middle = mean(x)
  const sd = Math.sqrt(mean(x.map((v) => (v - middle) ** 2)))
  return { middle, upper: middle + 2 * sd, lower: middle - 2 * sd }
}

const bollingerWidth = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const b = bands(candles, period)
  return (b.upper - b.lower) / b.middle * 100
}

const percentB = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const b = bands(candles, period)
  return b.upper === b.lower ? null : (candles.at(-1)!.close - b.lower) / (b.upper - b.lower)
}

const realizedVol = (period: number): Reference => (candles) => {
  if (candles.length <= period) return null
  const x = closes(candles).slice(-period - 1)
  const r = x.slice(1).map((v, i) => v / x[i]! - 1)
  const m = mean(r)
  return Math.sqrt(mean(r.map((v) => (v - m) ** 2))) * 100
}

const hlRange = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const window = candles.slice(-period)
  return (Math.max(...window.map((c) => c.high)) - Math.min(...window.map((c) => c.low))) / candles.at(-1)!.close * 100
}

const obvSlope = (period: number): Reference => (candles) => {
  if (candles.length <= period) return null
  const window = candles.slice(-period - 1)
  const obv: Array<number> = []
  let total = 0
  for (let i = 1; i < window.length; i++) {
    const c = window[i]!, prev = window[i - 1]!.close
    total += Math.sign(c.close - prev) * c.volume
    obv.push(total)
  }
  const volume = mean(window.slice(1).map((c) => c.volume))
  return volume === 0 ? null : lsSlope(obv) / volume
}

const volumeRatio = (period: number): Reference => (candles) => {
  if (candles.length <= period) return null
  const before = mean(candles.slice(-period - 1, -1).map((c) => c.volume))
  return before === 0 ? null : candles.at(-1)!.volume / before
}

const vwapDeviation = (period: number): Reference => (candles) => {
  if (candles.length < period) return null
  const window = candles.slice(-period)
  const volume = window.reduce((a, c) => a + c.volume, 0)
  if (volume === 0) return null
  const vwap = window.reduce((a, c) => a + typical(c) * c.volume, 0) / volume
  return (candles.at(-1)!.close / vwap - 1) * 100
}

const mfi = (period: number): Reference => (candles) => {
  if (candles.length <= period) return null
  const window = candles.slice(-period - 1)
  let positive = 0, negative = 0
  for (let i = 1; i < window.length; i++) {
    const tp = typical(window[i]!), prev = typical(window[i - 1]!)
    if (tp > prev) positive += tp * window[i]!.volume
    if (tp < prev) negative += tp * window[i]!.volume
  }
  if (positive + negative === 0) return null
  return 100 - 100 / (1 + positive / negative)
}

/** Every candle factor of the catalogue, by key. */
export const referenceFactors: Readonly<Record<string, Reference>> = {
  rsi_14: rsi(14),
  rsi_7: rsi(7),
  roc_10: roc(10),
  roc_20: roc(20),
  stoch_k_14: stochK(14),
  return_30: roc(30),
  price_vs_sma_20: priceVsSma(20),
  price_vs_sma_50: priceVsSma(50),
  ema_spread_12_26: emaSpread(12, 26),
  macd_histogram: macdHistogram,
  adx_14: adx(14),
  linreg_slope_20: linregSlope(20),
  atr_pct_14: atrPct(14),
  bollinger_width_20: bollingerWidth(20),
  bollinger_percent_b_20: percentB(20),
  realized_vol_20: realizedVol(20),
  hl_range_20: hlRange(20),
  obv_slope_20: obvSlope(20),
  volume_ratio_20: volumeRatio(20),
  vwap_deviation_20: vwapDeviation(20),
  mfi_14: mfi(14)
}

/** A seeded random walk of hourly bars with varying volume. */
export const randomWalk = (count: number, seed = 7, start = 100): Array<Candle> => {
  let state = seed, close = start
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  return Array.from({ length: count }, (_, i) => {
    const open = close
    close = open * (1 + (random() - 0.5) * 0.02)
    const high = Math.max(open, close) * (1 + random() * 0.01), low = Math.min(open, close) * (1 - random() * 0.01)
    return { time: 1_700_000_000_000 + i * 3_600_000, open, high, low, close, volume: 1 + random() * 100 }
  })
}
