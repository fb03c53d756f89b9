import { type Candle, type Timeframe, timeframeMillis } from "../venues/Venue.js"
import type { MarketSample } from "./MarketSample.js"

/** A stretch of time `[start, end]`, epoch ms. */
export interface Span {
  readonly start: number
  readonly end: number
}

/** The bar width of the candles that stand in for samples. */
export const candleMillis = timeframeMillis["1m"]

/**
 * The longest stretch without data a covered window may hold: three sampling intervals. A sample
 * covers the interval before it (as its flows do), so samples up to four intervals apart still
 * cover the time between them.
 */
export const maxHole = (interval: number) => 3 * interval

/** What each sample covers: the sampling interval before it. */
export const sampleSpans = (samples: ReadonlyArray<MarketSample>, interval: number): Array<Span> =>
  samples.map((s) => ({ start: s.sampled_at - interval, end: s.sampled_at }))

/** What each closed 1m candle covers: its minute. */
export const candleSpans = (candles: ReadonlyArray<Candle>): Array<Span> =>
  candles.map((c) => ({ start: c.time, end: c.time + candleMillis }))

/**
 * The start of the covered stretch that reaches `at`: the spans up to `at`, joined across holes
 * of at most `maxHole(interval)`. Null when nothing ends within `maxHole` of `at`.
 */
export const coveredFrom = (spans: ReadonlyArray<Span>, at: number, interval: number): number | null => {
  const hole = maxHole(interval)
  const sorted = spans.filter((s) => s.start <= at).sort((a, b) => a.start - b.start)
  let start = Number.NaN
  let end = Number.NaN
  for (const span of sorted) {
    if (span.start - end <= hole) {
      end = Math.max(end, Math.min(span.end, at))
    } else {
      start = span.start
      end = Math.min(span.end, at)
    }
  }
  return Number.isNaN(start) || at - end > hole ? null : start
}

/** How much of a window a covered stretch fills. */
export interface WindowCoverage {
  /** The start of the covered stretch that reaches the window's end (epoch ms), or null. */
  readonly covered_from: number | null
  /** The fraction of the window, 0 to 1, inside that stretch. */
  readonly coverage: number
  /** Whether the stretch reaches back to the window's start: the window is complete. */
  readonly ready: boolean
}

/** The coverage of the window `[at - time_window, at]` by a stretch covered from `from` to `at`. */
export const windowCoverage = (from: number | null, timeWindow: Timeframe, at: number): WindowCoverage => {
  const length = timeframeMillis[timeWindow]
  const start = at - length
  if (from === null) return { covered_from: null, coverage: 0, ready: false }
  return {
    covered_from: from,
    coverage: Math.min(1, Math.max(0, (at - Math.max(from, start)) / length)),
    ready: from <= start
  }
}

/**
 * A window's coverage at `now` as the sampling health records it: the last sample of the symbol
 * and the start of its covered stretch. Once the last sample is more than `maxHole` old, nothing
 * reaches `now`.
 */
export const recordedCoverage = (
  lastSampledAt: number | null,
  from: number | null,
  interval: number,
  timeWindow: Timeframe,
  now: number
) =>
  windowCoverage(
    lastSampledAt === null || now - lastSampledAt > maxHole(interval) ? null : from,
    timeWindow,
    now
  )
