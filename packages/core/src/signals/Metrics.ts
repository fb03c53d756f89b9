import { type Candle, type Timeframe, timeframeMillis } from "../venues/Venue.js"
import { candleMillis, candleSpans, coveredFrom, maxHole, sampleSpans, type Span, windowCoverage } from "./Coverage.js"
import type { MarketSample } from "./MarketSample.js"
import type { Metric, Operator, TriggerCondition } from "./Signal.js"

/**
 * The samples of the window `[at - time_window, at]`, oldest first, from a history sorted oldest
 * first. Flows (taker volumes) of a sample cover the time since the sample before it, so flow
 * metrics count only the samples strictly inside the window.
 */
export const windowOf = (history: ReadonlyArray<MarketSample>, timeWindow: Timeframe, at: number) => {
  const start = at - timeframeMillis[timeWindow]
  return history.filter((s) => s.sampled_at >= start && s.sampled_at <= at)
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const percentChange = (from: number, to: number) => from === 0 ? null : (to / from - 1) * 100

/**
 * Each metric over a window (oldest first), or null when the window holds too few samples.
 * `docs/signals.md` states the same definitions and units.
 */
const metrics: Record<Metric, (window: ReadonlyArray<MarketSample>, start: number) => number | null> = {
  // Percent change of the price from the window's first sample to its last.
  price_change: (w) => w.length < 2 ? null : percentChange(w[0]!.price, w[w.length - 1]!.price),
  // The price's range over the window, as a percent of its lowest price.
  volatility: (w) => {
    if (w.length < 2) return null
    const prices = w.map((s) => s.price)
    const low = Math.min(...prices)
    return low === 0 ? null : (Math.max(...prices) - low) / low * 100
  },
  // Quote volume (USD) traded within the window.
  volume: (w, start) => {
    const flows = w.filter((s) => s.sampled_at > start)
    return flows.length === 0 ? null : sum(flows.map((s) => s.taker_buy_volume + s.taker_sell_volume))
  },
  // Open interest at the last sample, in USD (coins times price).
  oi: (w) => w.length === 0 ? null : w[w.length - 1]!.open_interest * w[w.length - 1]!.price,
  // Percent change of open interest (coins) from the window's first sample to its last.
  oi_delta: (w) => w.length < 2 ? null : percentChange(w[0]!.open_interest, w[w.length - 1]!.open_interest),
  // The funding rate at the last sample, in percent per funding period.
  funding: (w) => w.length === 0 ? null : w[w.length - 1]!.funding_rate * 100,
  // Cumulative volume delta: taker buy minus taker sell quote volume (USD) within the window.
  cvd: (w, start) => {
    const flows = w.filter((s) => s.sampled_at > start)
    return flows.length === 0 ? null : sum(flows.map((s) => s.taker_buy_volume - s.taker_sell_volume))
  },
  // Taker buy over taker sell quote volume within the window.
  taker_ratio: (w, start) => {
    const flows = w.filter((s) => s.sampled_at > start)
    const sell = sum(flows.map((s) => s.taker_sell_volume))
    return flows.length === 0 || sell === 0 ? null : sum(flows.map((s) => s.taker_buy_volume)) / sell
  },
  // Bid over ask depth (quote value of the top levels) at the last sample.
  depth_ratio: (w) => {
    const last = w[w.length - 1]
    return last === undefined || last.ask_depth === 0 ? null : last.bid_depth / last.ask_depth
  },
  // (bid - ask) / (bid + ask) depth, averaged over the window's samples: from -1 (all asks) to 1 (all bids).
  order_imbalance: (w) => {
    const books = w.filter((s) => s.bid_depth + s.ask_depth > 0)
    return books.length === 0
      ? null
      : sum(books.map((s) => (s.bid_depth - s.ask_depth) / (s.bid_depth + s.ask_depth))) / books.length
  }
}

/**
 * The metric over the samples of the window `[at - time_window, at]` of a history sorted oldest
 * first, whatever part of the window they cover: the definition. `evaluateMetric` checks coverage.
 */
export const metricValue = (
  metric: Metric,
  timeWindow: Timeframe,
  history: ReadonlyArray<MarketSample>,
  at: number
): number | null => {
  const value = metrics[metric](windowOf(history, timeWindow, at), at - timeframeMillis[timeWindow])
  return value === null || !Number.isFinite(value) ? null : value
}

// `eq` and `neq` compare with a relative tolerance, since metrics are computed in floating point.
const equal = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

const operators: Record<Operator, (value: number, threshold: number) => boolean> = {
  gt: (v, t) => v > t,
  gte: (v, t) => v >= t,
  lt: (v, t) => v < t,
  lte: (v, t) => v <= t,
  eq: equal,
  neq: (v, t) => !equal(v, t),
  abs_gt: (v, t) => Math.abs(v) > t,
  abs_lt: (v, t) => Math.abs(v) < t
}

/** Whether the condition holds for a value; a value that cannot be computed never meets it. */
export const conditionMet = (condition: Pick<TriggerCondition, "operator" | "threshold">, value: number | null) =>
  value !== null && operators[condition.operator](value, condition.threshold)

/** Metrics of the state at the last sample (its window only says how fresh that sample must be). */
export const levelMetrics: ReadonlySet<Metric> = new Set<Metric>(["oi", "funding", "depth_ratio"])

/** Metrics of price and traded volume, for which closed 1m candles stand in where samples are missing. */
export const candleMetrics: ReadonlySet<Metric> = new Set<Metric>(["price_change", "volatility", "volume"])

/** What the metrics of one exchange and symbol are evaluated on at one time. */
export interface WindowInputs {
  /** The samples, oldest first (older than any window is fine: only the window counts). */
  readonly history: ReadonlyArray<MarketSample>
  /** The sampling interval (ms): each sample covers the interval before it. */
  readonly interval: number
  /** The start of the stretch the samples cover up to the evaluation time (`coveredFrom`), or null. */
  readonly sampledFrom: number | null
  /** Closed 1m candles, oldest first, for the candle metrics where the samples do not cover the window. */
  readonly candles: ReadonlyArray<Candle>
}

/** The inputs of an evaluation at `at`: the samples' covered stretch is worked out once for every metric. */
export const windowInputs = (
  history: ReadonlyArray<MarketSample>,
  interval: number,
  at: number,
  candles: ReadonlyArray<Candle> = []
): WindowInputs => ({
  history,
  interval,
  candles,
  sampledFrom: coveredFrom(sampleSpans(history, interval), at, interval)
})

const floorMinute = (t: number) => Math.floor(t / candleMillis) * candleMillis

/**
 * A candle metric over a window that candles complete: from the start of the minute the window
 * starts in, on the samples and candles there. A candle's quote volume is its coins times its
 * close, counted for the part of its minute that no sample's flows cover.
 */
const fromCandles = (metric: Metric, inputs: WindowInputs, start: number, at: number): number | null => {
  const from = floorMinute(start)
  const bars = inputs.candles.filter((c) => c.time >= from && c.time + candleMillis <= at)
  const first = inputs.history.findIndex((s) => s.sampled_at >= from)
  const samples = first < 0 ? [] : inputs.history.slice(first).filter((s) => s.sampled_at <= at)
  if (metric === "price_change") {
    // At equal times the sample's price comes last: the venue's price at the evaluation time.
    const points: Array<readonly [number, number]> = [
      ...bars.flatMap((b) => [[b.time, b.open] as const, [b.time + candleMillis, b.close] as const]),
      ...samples.map((s) => [s.sampled_at, s.price] as const)
    ].sort((a, b) => a[0] - b[0])
    return points.length < 2 ? null : percentChange(points[0]![1], points[points.length - 1]![1])
  }
  if (metric === "volatility") {
    const prices = [...bars.flatMap((b) => [b.high, b.low]), ...samples.map((s) => s.price)]
    const low = Math.min(...prices)
    return prices.length < 2 || low === 0 ? null : (Math.max(...prices) - low) / low * 100
  }
  // Volume: each sample's flows cover the time since the sample before it, at most one interval.
  const sampled = new Map<number, number>()
  let flows = 0
  for (let i = first < 0 ? inputs.history.length : first; i < inputs.history.length; i++) {
    const s = inputs.history[i]!
    if (s.sampled_at > at) break
    if (s.sampled_at <= from) continue
    flows += s.taker_buy_volume + s.taker_sell_volume
    const previous = i > 0 ? inputs.history[i - 1]!.sampled_at : -Infinity
    const span: Span = { start: Math.max(previous, s.sampled_at - inputs.interval), end: s.sampled_at }
    for (let minute = floorMinute(span.start); minute < span.end; minute += candleMillis) {
      const overlap = Math.min(span.end, minute + candleMillis) - Math.max(span.start, minute)
      sampled.set(minute, (sampled.get(minute) ?? 0) + overlap)
    }
  }
  if (samples.length === 0 && bars.length === 0) return null
  return bars.reduce(
    (total, b) => total + b.volume * b.close * Math.max(0, 1 - (sampled.get(b.time) ?? 0) / candleMillis),
    flows
  )
}

/** A metric's reading: its value on a complete window, or null with the reason. */
export interface MetricReading {
  readonly value: number | null
  /** Whether the window was complete: covered by samples, or by candles for the candle metrics. */
  readonly ready: boolean
  /** Why the value is null (`not_ready: ...` or `undefined: ...`); null with a value. */
  readonly reason: string | null
}

const reading = (value: number | null): MetricReading =>
  value === null || !Number.isFinite(value)
    ? { value: null, ready: true, reason: "undefined: too few samples or a zero denominator in the window" }
    : { value, ready: true, reason: null }

/**
 * The metric over the window `[at - time_window, at]`, computed only on a complete window. A
 * level metric needs a sample in the window. Any other needs the samples to cover the window
 * (`coveredFrom` at or before its start); a candle metric may instead be covered by samples and
 * closed 1m candles together. Otherwise it is not ready.
 */
export const evaluateMetric = (
  metric: Metric,
  timeWindow: Timeframe,
  inputs: WindowInputs,
  at: number
): MetricReading => {
  const start = at - timeframeMillis[timeWindow]
  if (levelMetrics.has(metric)) {
    return windowOf(inputs.history, timeWindow, at).length === 0
      ? { value: null, ready: false, reason: `not_ready: no sample in the ${timeWindow} window` }
      : reading(metricValue(metric, timeWindow, inputs.history, at))
  }
  const sampled = windowCoverage(inputs.sampledFrom, timeWindow, at)
  if (sampled.ready) return reading(metricValue(metric, timeWindow, inputs.history, at))
  if (candleMetrics.has(metric) && inputs.candles.length > 0) {
    // Only spans that end near or after the window's start can reach it.
    const spans = [...sampleSpans(inputs.history, inputs.interval), ...candleSpans(inputs.candles)]
      .filter((s) => s.end >= start - maxHole(inputs.interval))
    if (windowCoverage(coveredFrom(spans, at, inputs.interval), timeWindow, at).ready) {
      return reading(fromCandles(metric, inputs, start, at))
    }
  }
  const percent = Math.floor(sampled.coverage * 100)
  return { value: null, ready: false, reason: `not_ready: the samples cover ${percent}% of the ${timeWindow} window` }
}

/** The condition on its metric's reading: met only on a value, so never when not ready. */
export const evaluateCondition = (condition: TriggerCondition, inputs: WindowInputs, at: number) => {
  const result = evaluateMetric(condition.metric, condition.time_window, inputs, at)
  return { value: result.value, met: conditionMet(condition, result.value), ready: result.ready, reason: result.reason }
}
