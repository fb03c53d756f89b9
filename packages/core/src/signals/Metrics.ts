import { type Timeframe, timeframeMillis } from "../venues/Venue.js"
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

/** The metric over the window `[at - time_window, at]` of a history sorted oldest first. */
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

/** The condition over a history sorted oldest first: the metric's value and whether it is met. */
export const evaluateCondition = (condition: TriggerCondition, history: ReadonlyArray<MarketSample>, at: number) => {
  const value = metricValue(condition.metric, condition.time_window, history, at)
  return { value, met: conditionMet(condition, value) }
}
