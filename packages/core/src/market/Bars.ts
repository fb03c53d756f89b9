import { toSignificant } from "../stats/Significant.js"
import { type Candle, type Timeframe, timeframeMillis } from "../venues/Venue.js"
import type { Span } from "./CandleStore.js"

/** The timeframes from finest to coarsest. */
export const timeframes = Object.keys(timeframeMillis) as ReadonlyArray<Timeframe>

/**
 * The finer timeframes a bar of `timeframe` can be built from, coarsest first: each divides it, so
 * its bars tile the coarser bar exactly.
 */
export const finerTimeframes = (timeframe: Timeframe): ReadonlyArray<Timeframe> =>
  timeframes.filter((t) =>
    timeframeMillis[t] < timeframeMillis[timeframe] && timeframeMillis[timeframe] % timeframeMillis[t] === 0
  )
    .reverse()

/**
 * The open times of the closed bars of `[start, end)` (which need not be on the grid): from the
 * first bar opening at or after `start` up to the last one that opens before `end` and closed by `now`.
 */
export const openTimes = (span: Span, timeframe: Timeframe, now: number): Span => {
  const step = timeframeMillis[timeframe]
  return {
    start: Math.ceil(span.start / step) * step,
    end: Math.min(Math.ceil(span.end / step) * step, Math.floor(now / step) * step)
  }
}

/** The part of `span` that whole bars of the timeframe fill. */
export const wholeBars = (span: Span, timeframe: Timeframe): Span => {
  const step = timeframeMillis[timeframe]
  return { start: Math.ceil(span.start / step) * step, end: Math.floor(span.end / step) * step }
}

/** The parts of `span` that none of `covered` (sorted by start) covers. */
export const uncovered = (span: Span, covered: ReadonlyArray<Span>): Array<Span> => {
  const gaps: Array<Span> = []
  let at = span.start
  for (const c of covered) {
    if (c.end <= at) continue
    if (c.start >= span.end) break
    if (c.start > at) gaps.push({ start: at, end: c.start })
    at = Math.max(at, c.end)
  }
  if (at < span.end) gaps.push({ start: at, end: span.end })
  return gaps
}

/**
 * Aggregates bars (oldest first) into bars of `timeframe`, at the boundaries the venues use: open
 * times on multiples of the timeframe since the epoch (UTC midnight for 1d). Open is the first
 * bar's, close the last's, high and low the extremes, volume the sum; a bucket with no bar is no bar.
 */
export const resample = (bars: ReadonlyArray<Candle>, timeframe: Timeframe): Array<Candle> => {
  const step = timeframeMillis[timeframe]
  const out: Array<{ -readonly [K in keyof Candle]: Candle[K] }> = []
  let current: (typeof out)[number] | undefined
  for (const bar of bars) {
    const time = Math.floor(bar.time / step) * step
    if (current === undefined || current.time !== time) {
      if (current !== undefined) out.push(current)
      current = { time, open: bar.open, high: bar.high, low: bar.low, close: bar.close, volume: bar.volume }
    } else {
      current.high = Math.max(current.high, bar.high)
      current.low = Math.min(current.low, bar.low)
      current.close = bar.close
      current.volume += bar.volume
    }
  }
  if (current !== undefined) out.push(current)
  // Sums of doubles: round the volume as the venues' decimals would (no 0.30000000000000004).
  for (const bar of out) bar.volume = toSignificant(bar.volume, 12)
  return out
}
