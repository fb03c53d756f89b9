import { factorHelperNames, taFactorSource } from "./TaFactorSource.js"

/**
 * The platform's one indicator library: the `ta` helpers as JavaScript source. The sandbox runs
 * it, and the host runs the very same text (`hostTa`) for market data, the assistant, insights and
 * the ranking, so RSI(14) is one number everywhere. Every helper takes an array of numbers or of
 * candles (their `close` is used; `atr` needs candles) and answers the value at the last element,
 * or null while there is not enough data. `sma` and `bollinger` read only the last `period`
 * elements; the smoothed ones (`ema`, `rsi`, `macd`, `atr`) walk the whole array.
 */
export const taSource = `
const ta = (() => {
  // Taken now, so a program that replaces Math's functions or Array's methods does not change ta.
  const { abs, floor, max, sqrt } = Math
  const value = (x) => (typeof x === "number" ? x : x.close)
  // The hot path of most programs, so the element type is tested once, not per element.
  const sma = (values, period) => {
    const n = values.length
    if (!(period >= 1) || n < period) return null
    // while loops run a little faster than for loops in QuickJS.
    let sum = 0, i = n - period
    if (typeof values[0] === "number") while (i < n) sum += values[i++]
    else while (i < n) sum += values[i++].close
    return sum / period
  }
  // Seeded with the first value. No arrays: the ranking computes these for every symbol.
  const ema = (values, period) => {
    if (!(period >= 1) || values.length < period) return null
    const k = 2 / (period + 1)
    let e = value(values[0])
    for (let i = 1; i < values.length; i++) e = value(values[i]) * k + e * (1 - k)
    return e
  }
  // Wilder's smoothing, seeded with the plain average of the first period.
  const rsi = (values, period = 14) => {
    if (!(period >= 1) || values.length <= period) return null
    let gain = 0, loss = 0
    for (let i = 1; i <= period; i++) {
      const d = value(values[i]) - value(values[i - 1])
      if (d > 0) gain += d; else loss -= d
    }
    gain /= period; loss /= period
    for (let i = period + 1; i < values.length; i++) {
      const d = value(values[i]) - value(values[i - 1])
      gain = (gain * (period - 1) + max(d, 0)) / period
      loss = (loss * (period - 1) + max(-d, 0)) / period
    }
    return loss === 0 ? 100 : 100 - 100 / (1 + gain / loss)
  }
  const macd = (values, fast = 12, slow = 26, signal = 9) => {
    if (!(fast >= 1) || !(slow >= 1) || !(signal >= 1) || values.length < slow + signal - 1) return null
    // The fast and slow averages, and from bar floor(slow - 1) on the signal average of their difference, in one pass.
    const kf = 2 / (fast + 1), ks = 2 / (slow + 1), kg = 2 / (signal + 1), start = floor(slow - 1)
    let f = value(values[0]), s = f, m = f - s, g = null
    for (let i = 0; i < values.length; i++) {
      if (i > 0) {
        const v = value(values[i])
        f = v * kf + f * (1 - kf)
        s = v * ks + s * (1 - ks)
      }
      if (i >= start) {
        m = f - s
        g = g === null ? m : m * kg + g * (1 - kg)
      }
    }
    return { macd: m, signal: g, histogram: m - g }
  }
  const atr = (candles, period = 14) => {
    if (!(period >= 1) || candles.length <= period) return null
    const tr = (i) => {
      const c = candles[i], prev = candles[i - 1].close
      return max(c.high - c.low, abs(c.high - prev), abs(c.low - prev))
    }
    let a = 0
    for (let i = 1; i <= period; i++) a += tr(i)
    a /= period
    for (let i = period + 1; i < candles.length; i++) a = (a * (period - 1) + tr(i)) / period
    return a
  }
  const bollinger = (values, period = 20, k = 2) => {
    const middle = sma(values, period)
    if (middle === null) return null
    let sq = 0
    // x * x, not x ** 2: pow may round differently in QuickJS and in V8, and both must agree.
    for (let i = values.length - period; i < values.length; i++) {
      const x = value(values[i]) - middle
      sq += x * x
    }
    const d = k * sqrt(sq / period)
    return { upper: middle + d, middle, lower: middle - d }
  }
  ${taFactorSource}
  return Object.freeze({ sma, ema, rsi, macd, atr, bollinger, ${factorHelperNames.join(", ")} })
})()
`

/** The names of the `ta` helpers. */
export const indicatorNames = ["sma", "ema", "rsi", "macd", "atr", "bollinger", ...factorHelperNames] as const
export type IndicatorName = typeof indicatorNames[number]

/** What a helper answers: a number, null while there is too little data, or (macd, bollinger) an object. */
export type IndicatorValue = number | null | Readonly<Record<string, number>>

/** The `ta` helpers, run by the host's JavaScript engine from the same source as the sandbox's. */
export const hostTa = new Function(`${taSource}\nreturn ta`)() as Readonly<
  Record<IndicatorName, (values: ReadonlyArray<unknown>, ...args: ReadonlyArray<number | undefined>) => IndicatorValue>
>
