/**
 * The factor helpers of `ta`, as JavaScript source spliced into `taSource` (so the sandbox, the
 * host's window values and the ranking all run this very text). It runs in the scope of the `ta`
 * helpers (`value`, `sma`, `ema`, `rsi`, `macd`, `atr`, `bollinger`, and `abs`, `max`, `sqrt`).
 * Each answers a number, or null while there is too little data or where the value is undefined
 * (a division by zero: flat prices, zero volume). Periods are whole numbers of at least 1; any
 * other period answers null. Only `+ - * /` and `sqrt` are used, which round the same everywhere.
 * `docs/ranking.md` gives each formula.
 */
export const taFactorSource = `
  const { min } = Math
  const whole = (p) => typeof p === "number" && p >= 1 && p % 1 === 0
  const finite = (k) => typeof k === "number" && k - k === 0
  const last = (values) => value(values[values.length - 1])
  // Least-squares slope of y(0..count-1) against its index.
  const slopeOf = (count, y) => {
    const mid = (count - 1) / 2
    let sxy = 0, sxx = 0
    for (let j = 0; j < count; j++) {
      const x = j - mid
      sxy += x * y(j)
      sxx += x * x
    }
    return sxy / sxx
  }
  const roc = (values, period = 10) => {
    const n = values.length
    if (!whole(period) || n <= period) return null
    const base = value(values[n - 1 - period])
    return base === 0 ? null : (last(values) - base) / base * 100
  }
  const stochK = (candles, period = 14) => {
    const n = candles.length
    if (!whole(period) || n < period) return null
    let high = -Infinity, low = Infinity
    for (let i = n - period; i < n; i++) {
      const c = candles[i]
      high = max(high, c.high)
      low = min(low, c.low)
    }
    return high === low ? null : (candles[n - 1].close - low) / (high - low) * 100
  }
  const priceVsSma = (values, period = 20) => {
    const s = whole(period) ? sma(values, period) : null
    return s === null || s === 0 ? null : (last(values) - s) / s * 100
  }
  const emaSpread = (values, fast = 12, slow = 26) => {
    if (!whole(fast) || !whole(slow)) return null
    const f = ema(values, fast), s = ema(values, slow)
    return f === null || s === null || s === 0 ? null : (f - s) / s * 100
  }
  const macdPct = (values, fast = 12, slow = 26, signal = 9) => {
    if (!whole(fast) || !whole(slow) || !whole(signal)) return null
    const m = macd(values, fast, slow, signal)
    if (m === null) return null
    const c = last(values)
    return c === 0 ? null : m.histogram / c * 100
  }
  // Wilder: +DM, -DM summed then smoothed; DX from the smoothed sums (the true range cancels out,
  // so flat prices give DX 0); ADX seeded with the mean of the first period's DX.
  const adx = (candles, period = 14) => {
    const n = candles.length
    if (!whole(period) || n < 2 * period) return null
    let plus = 0, minus = 0, sum = 0, a = 0
    for (let i = 1; i < n; i++) {
      const c = candles[i], p = candles[i - 1]
      const up = c.high - p.high, down = p.low - c.low
      const dmPlus = up > down && up > 0 ? up : 0, dmMinus = down > up && down > 0 ? down : 0
      if (i <= period) {
        plus += dmPlus
        minus += dmMinus
      } else {
        plus = plus - plus / period + dmPlus
        minus = minus - minus / period + dmMinus
      }
      if (i < period) continue
      const dx = plus + minus === 0 ? 0 : abs(plus - minus) / (plus + minus) * 100
      if (i < 2 * period) {
        sum += dx
        if (i === 2 * period - 1) a = sum / period
      } else a = (a * (period - 1) + dx) / period
    }
    return a
  }
  const slope = (values, period = 20) => {
    const n = values.length
    if (!whole(period) || period < 2 || n < period) return null
    const from = n - period
    let sum = 0
    for (let i = from; i < n; i++) sum += value(values[i])
    const mean = sum / period
    return mean === 0 ? null : slopeOf(period, (j) => value(values[from + j])) / mean * 100
  }
  const atrPct = (candles, period = 14) => {
    const a = whole(period) ? atr(candles, period) : null
    if (a === null) return null
    const c = candles[candles.length - 1].close
    return c === 0 ? null : a / c * 100
  }
  const bandwidth = (values, period = 20, k = 2) => {
    const b = whole(period) && finite(k) ? bollinger(values, period, k) : null
    return b === null || b.middle === 0 ? null : (b.upper - b.lower) / b.middle * 100
  }
  const percentB = (values, period = 20, k = 2) => {
    const b = whole(period) && finite(k) ? bollinger(values, period, k) : null
    return b === null || b.upper === b.lower ? null : (last(values) - b.lower) / (b.upper - b.lower)
  }
  // Population standard deviation of the last period's bar-to-bar returns, in percent.
  const volatility = (values, period = 20) => {
    const n = values.length
    if (!whole(period) || n <= period) return null
    let sum = 0, sq = 0
    for (let i = n - period; i < n; i++) {
      const prev = value(values[i - 1])
      if (prev === 0) return null
      sum += (value(values[i]) - prev) / prev
    }
    const mean = sum / period
    for (let i = n - period; i < n; i++) {
      const prev = value(values[i - 1])
      const x = (value(values[i]) - prev) / prev - mean
      sq += x * x
    }
    return sqrt(sq / period) * 100
  }
  const range = (candles, period = 20) => {
    const n = candles.length
    if (!whole(period) || n < period) return null
    let high = -Infinity, low = Infinity
    for (let i = n - period; i < n; i++) {
      high = max(high, candles[i].high)
      low = min(low, candles[i].low)
    }
    const c = candles[n - 1].close
    return c === 0 ? null : (high - low) / c * 100
  }
  // On-balance volume over the last period bars (from 0), its slope per bar in mean bar volumes.
  const obvSlope = (candles, period = 20) => {
    const n = candles.length
    if (!whole(period) || period < 2 || n <= period) return null
    const from = n - period, obv = []
    let total = 0, volume = 0
    for (let i = from; i < n; i++) {
      const c = candles[i], prev = candles[i - 1].close
      total += c.close > prev ? c.volume : c.close < prev ? -c.volume : 0
      volume += c.volume
      obv[i - from] = total
    }
    return volume === 0 ? null : slopeOf(period, (j) => obv[j]) / (volume / period)
  }
  // The last bar's volume over the mean of the period bars before it.
  const volumeRatio = (candles, period = 20) => {
    const n = candles.length
    if (!whole(period) || n <= period) return null
    let sum = 0
    for (let i = n - 1 - period; i < n - 1; i++) sum += candles[i].volume
    return sum === 0 ? null : candles[n - 1].volume / (sum / period)
  }
  // Close against the volume-weighted typical price of the last period bars, in percent.
  const vwapDev = (candles, period = 20) => {
    const n = candles.length
    if (!whole(period) || n < period) return null
    let pv = 0, v = 0
    for (let i = n - period; i < n; i++) {
      const c = candles[i]
      pv += (c.high + c.low + c.close) / 3 * c.volume
      v += c.volume
    }
    if (v === 0) return null
    const vwap = pv / v
    return vwap === 0 ? null : (candles[n - 1].close - vwap) / vwap * 100
  }
  const mfi = (candles, period = 14) => {
    const n = candles.length
    if (!whole(period) || n <= period) return null
    let up = 0, down = 0
    let prev = (candles[n - 1 - period].high + candles[n - 1 - period].low + candles[n - 1 - period].close) / 3
    for (let i = n - period; i < n; i++) {
      const c = candles[i], tp = (c.high + c.low + c.close) / 3
      if (tp > prev) up += tp * c.volume
      else if (tp < prev) down += tp * c.volume
      prev = tp
    }
    if (up + down === 0) return null
    return down === 0 ? 100 : 100 - 100 / (1 + up / down)
  }
`

/** The names of the factor helpers, as `ta` offers them. */
export const factorHelperNames = [
  "roc",
  "stochK",
  "priceVsSma",
  "emaSpread",
  "macdPct",
  "adx",
  "slope",
  "atrPct",
  "bandwidth",
  "percentB",
  "volatility",
  "range",
  "obvSlope",
  "volumeRatio",
  "vwapDev",
  "mfi"
] as const
