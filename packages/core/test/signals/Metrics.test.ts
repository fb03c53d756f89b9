import { describe, expect, it } from "@effect/vitest"
import {
  type Candle,
  conditionMet,
  coveredFrom,
  evaluateMetric,
  type MarketSample,
  maxHole,
  metricValue,
  sampleSpans,
  windowCoverage,
  windowInputs,
  windowOf
} from "@trading-platform/core"

const t0 = Date.parse("2025-03-01T00:00:00Z")
const second = 1000

/** A sample at `t0 + at` seconds: neutral values unless given. */
const sample = (at: number, fields: Partial<MarketSample> = {}): MarketSample => ({
  exchange: "venue1",
  symbol: "BTC",
  sampled_at: t0 + at * second,
  price: 100,
  volume_24h: 1_000_000,
  open_interest: 1_000,
  funding_rate: 0.0001,
  taker_buy_volume: 0,
  taker_sell_volume: 0,
  bid_depth: 500,
  ask_depth: 500,
  ...fields
})

// A minute of samples every 15 s, and one from before the minute that must not count.
const history = [
  sample(-75, { price: 50, open_interest: 1, taker_buy_volume: 1e9, bid_depth: 1e9 }),
  sample(0, { price: 100, open_interest: 1_000, taker_buy_volume: 777, taker_sell_volume: 555 }),
  sample(15, {
    price: 110,
    open_interest: 1_100,
    taker_buy_volume: 300,
    taker_sell_volume: 100,
    bid_depth: 900,
    ask_depth: 100
  }),
  sample(30, {
    price: 90,
    open_interest: 1_050,
    taker_buy_volume: 100,
    taker_sell_volume: 100,
    bid_depth: 500,
    ask_depth: 500
  }),
  sample(45, {
    price: 95,
    open_interest: 1_200,
    taker_buy_volume: 200,
    taker_sell_volume: 400,
    bid_depth: 100,
    ask_depth: 300
  }),
  sample(60, {
    price: 105,
    open_interest: 1_250,
    funding_rate: -0.00025,
    taker_buy_volume: 400,
    taker_sell_volume: 0,
    bid_depth: 600,
    ask_depth: 200
  })
]
const at = t0 + 60 * second

describe("signal metrics over a hand-made window", () => {
  it("the window of 1m at t holds the samples from t - 60 s to t, inclusive", () => {
    expect(windowOf(history, "1m", at).map((s) => (s.sampled_at - t0) / second)).toEqual([0, 15, 30, 45, 60])
    expect(windowOf(history, "5m", at)).toHaveLength(6)
  })

  it("price_change is the percent change from the window's first price to its last", () => {
    expect(metricValue("price_change", "1m", history, at)).toBeCloseTo(5)
  })

  it("volatility is the price range as a percent of the lowest price", () => {
    expect(metricValue("volatility", "1m", history, at)).toBeCloseTo((110 - 90) / 90 * 100)
  })

  it("volume sums taker buy and sell quote volume of samples strictly inside the window", () => {
    // The sample at the window's start carries flows from before it.
    expect(metricValue("volume", "1m", history, at)).toBe(300 + 100 + 100 + 100 + 200 + 400 + 400)
  })

  it("oi is the last open interest in USD: coins times price", () => {
    expect(metricValue("oi", "1m", history, at)).toBe(1_250 * 105)
  })

  it("oi_delta is the percent change of open interest over the window", () => {
    expect(metricValue("oi_delta", "1m", history, at)).toBeCloseTo(25)
  })

  it("funding is the last funding rate in percent", () => {
    expect(metricValue("funding", "1m", history, at)).toBeCloseTo(-0.025)
  })

  it("cvd is taker buy minus taker sell quote volume inside the window", () => {
    expect(metricValue("cvd", "1m", history, at)).toBe(300 - 100 + 100 - 100 + 200 - 400 + 400 - 0)
  })

  it("taker_ratio is taker buy over taker sell volume inside the window", () => {
    expect(metricValue("taker_ratio", "1m", history, at)).toBeCloseTo(1000 / 600)
  })

  it("depth_ratio is bid over ask depth at the last sample", () => {
    expect(metricValue("depth_ratio", "1m", history, at)).toBe(3)
  })

  it("order_imbalance averages (bid - ask) / (bid + ask) over the window", () => {
    const expected = (0 + 0.8 + 0 + -0.5 + 0.5) / 5
    expect(metricValue("order_imbalance", "1m", history, at)).toBeCloseTo(expected)
  })

  it("a window with too few samples has no value", () => {
    const one = [sample(60)]
    expect(metricValue("price_change", "1m", one, at)).toBeNull()
    expect(metricValue("volatility", "1m", one, at)).toBeNull()
    expect(metricValue("oi_delta", "1m", one, at)).toBeNull()
    expect(metricValue("funding", "1m", [], at)).toBeNull()
    // The only sample lies outside the window: nothing is stale-read.
    expect(metricValue("depth_ratio", "1m", [sample(-75)], at)).toBeNull()
    // No taker sells: the ratio is undefined rather than infinite.
    expect(metricValue("taker_ratio", "1m", [sample(0), sample(60, { taker_buy_volume: 5 })], at)).toBeNull()
  })
})

describe("signal operators", () => {
  const cases: Array<[Parameters<typeof conditionMet>[0]["operator"], number, number, boolean]> = [
    ["gt", 2, 1, true],
    ["gt", 1, 1, false],
    ["gte", 1, 1, true],
    ["gte", 0.9, 1, false],
    ["lt", 0.9, 1, true],
    ["lt", 1, 1, false],
    ["lte", 1, 1, true],
    ["lte", 1.1, 1, false],
    ["eq", 0.1 + 0.2, 0.3, true],
    ["eq", 0.31, 0.3, false],
    ["neq", 0.31, 0.3, true],
    ["neq", 0.1 + 0.2, 0.3, false],
    ["abs_gt", -3, 2, true],
    ["abs_gt", 1.5, 2, false],
    ["abs_lt", -1, 2, true],
    ["abs_lt", -3, 2, false]
  ]
  for (const [operator, value, threshold, met] of cases) {
    it(`${value} ${operator} ${threshold} is ${met ? "met" : "not met"}`, () => {
      expect(conditionMet({ operator, threshold }, value)).toBe(met)
    })
  }

  it("a value that cannot be computed meets no operator", () => {
    for (const [operator] of cases) expect(conditionMet({ operator, threshold: 0 }, null)).toBe(false)
  })
})

const interval = 15 * second
const hour = 3_600 * second

/** Samples every `step` seconds from `from` to `to` (seconds after t0), both included. */
const every = (from: number, to: number, step = 15, fields: Partial<MarketSample> = {}) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => sample(from + i * step, fields))

describe("window coverage: each sample covers the interval before it; holes of up to three intervals are bridged", () => {
  const end = t0 + 600 * second

  it("a window is ready when the first sample of the covered stretch is at most one interval after its start", () => {
    // The 5m window at t0 + 600 s starts at t0 + 300 s.
    const exactly = every(315, 600)
    expect(coveredFrom(sampleSpans(exactly, interval), end, interval)).toBe(t0 + 300 * second)
    expect(windowCoverage(t0 + 300 * second, "5m", end)).toEqual({
      covered_from: t0 + 300 * second,
      coverage: 1,
      ready: true
    })
    const late = [{ ...sample(315), sampled_at: t0 + 315_001 }, ...every(330, 600)]
    const from = coveredFrom(sampleSpans(late, interval), end, interval)
    expect(from).toBe(t0 + 300 * second + 1)
    expect(windowCoverage(from, "5m", end)).toEqual({
      covered_from: from,
      coverage: (300_000 - 1) / 300_000,
      ready: false
    })
  })

  it("a hole of exactly three intervals is bridged; one millisecond more starts the stretch after it", () => {
    expect(maxHole(interval)).toBe(45 * second)
    // Samples at 300 and 360 s: the second covers 345 to 360 s, so 300 to 345 s is the hole.
    const bridged = [...every(0, 300), ...every(360, 600)]
    expect(coveredFrom(sampleSpans(bridged, interval), end, interval)).toBe(t0 - 15 * second)
    const broken = [...every(0, 300), ...every(360, 600).map((s) => ({ ...s, sampled_at: s.sampled_at + 1 }))]
    expect(coveredFrom(sampleSpans(broken, interval), end + 1, interval)).toBe(t0 + 345 * second + 1)
  })

  it("nothing is covered once the last sample is more than three intervals old", () => {
    const samples = every(0, 555)
    expect(coveredFrom(sampleSpans(samples, interval), t0 + 600 * second, interval)).toBe(t0 - 15 * second)
    expect(coveredFrom(sampleSpans(samples, interval), t0 + 600 * second + 1, interval)).toBeNull()
    expect(coveredFrom([], end, interval)).toBeNull()
    expect(windowCoverage(null, "1m", end)).toEqual({ covered_from: null, coverage: 0, ready: false })
  })

  it("a new symbol's 1h volume after one round is not ready: null with the reason, however much it traded", () => {
    // The bug: a pool fired on 5 s of flows as if they were an hour's.
    const first = [sample(3_600, { taker_buy_volume: 20_000, taker_sell_volume: 17_476 })]
    const reading = evaluateMetric("volume", "1h", windowInputs(first, interval, t0 + hour), t0 + hour)
    expect(reading).toEqual({ value: null, ready: false, reason: "not_ready: the samples cover 0% of the 1h window" })
    expect(metricValue("volume", "1h", first, t0 + hour)).toBe(37_476)
  })

  it("once the samples cover the window, every metric is computed from them as defined", () => {
    const covered = every(15, 3_600, 15, { taker_buy_volume: 10, taker_sell_volume: 5 })
    const inputs = windowInputs(covered, interval, t0 + hour)
    expect(evaluateMetric("volume", "1h", inputs, t0 + hour)).toEqual({ value: 240 * 15, ready: true, reason: null })
    expect(evaluateMetric("cvd", "1h", inputs, t0 + hour)).toEqual({ value: 240 * 5, ready: true, reason: null })
    // One sample late, and nothing but the level metrics is ready.
    const late = windowInputs(covered.slice(1), interval, t0 + hour)
    for (const metric of ["volume", "cvd", "taker_ratio", "oi_delta", "order_imbalance", "price_change"] as const) {
      expect(evaluateMetric(metric, "1h", late, t0 + hour)).toMatchObject({ value: null, ready: false })
    }
    for (const metric of ["oi", "funding", "depth_ratio"] as const) {
      expect(evaluateMetric(metric, "1h", late, t0 + hour).ready).toBe(true)
    }
  })

  it("a level metric needs only a sample in the window; a covered metric that is undefined says so", () => {
    const one = windowInputs([sample(3_600)], interval, t0 + hour)
    expect(evaluateMetric("oi", "1m", one, t0 + hour)).toEqual({ value: 100_000, ready: true, reason: null })
    const stale = windowInputs([sample(3_500)], interval, t0 + hour)
    expect(evaluateMetric("depth_ratio", "1m", stale, t0 + hour)).toEqual({
      value: null,
      ready: false,
      reason: "not_ready: no sample in the 1m window"
    })
    const noSells = windowInputs(every(0, 60, 15, { taker_buy_volume: 5 }), interval, t0 + 60 * second)
    expect(evaluateMetric("taker_ratio", "1m", noSells, t0 + 60 * second)).toMatchObject({
      value: null,
      ready: true,
      reason: expect.stringMatching(/^undefined: /)
    })
  })
})

describe("price metrics backfilled from closed 1m candles", () => {
  // Evaluated an hour and 40 s after t0 on a first sample: the 1h window starts in t0's minute.
  const at = t0 + hour + 40 * second
  const minute = 60 * second
  /** Minute bars from t0 on, rising 1 a minute from 100, 2 coins each; without the `skip`th. */
  const bars = (count: number, skip?: number): Array<Candle> =>
    Array.from({ length: count }, (_, i) => ({
      time: t0 + i * minute,
      open: 100 + i,
      high: 100 + i + 0.5,
      low: 100 + i - 0.5,
      close: 101 + i,
      volume: 2
    })).filter((_, i) => i !== skip)
  const fresh = [sample(3_640, { price: 161, taker_buy_volume: 30, taker_sell_volume: 10 })]

  it("candles up to the last closed minute and the first sample complete the window: the metric is ready at once", () => {
    const inputs = windowInputs(fresh, interval, at, bars(60))
    // From the open of the minute the window starts in to the sample's price.
    expect(evaluateMetric("price_change", "1h", inputs, at)).toEqual({
      value: (161 / 100 - 1) * 100,
      ready: true,
      reason: null
    })
    expect(evaluateMetric("volatility", "1h", inputs, at).value).toBeCloseTo((161 - 99.5) / 99.5 * 100, 10)
    // Every bar's coins at its close; the sample's flows (its last 15 s) overlap none of them.
    const quote = bars(60).reduce((total, b) => total + b.volume * b.close, 0)
    expect(evaluateMetric("volume", "1h", inputs, at).value).toBeCloseTo(quote + 40, 9)
  })

  it("a minute covered by both counts the sample's flows and only the rest of the candle's volume", () => {
    // 10 s past the hour the first sample's flows cover the last 5 s of the last closed bar.
    const early = t0 + hour + 10 * second
    const inputs = windowInputs([sample(3_610, { price: 161, taker_buy_volume: 8 })], interval, early, bars(60))
    const quote = bars(60).reduce((total, b) => total + b.volume * b.close, 0) - (5 / 60) * 2 * 160
    expect(evaluateMetric("volume", "1h", inputs, early).value).toBeCloseTo(quote + 8, 9)
  })

  it("a missing minute is a hole longer than three intervals: not ready", () => {
    const inputs = windowInputs(fresh, interval, at, bars(60, 30))
    expect(evaluateMetric("price_change", "1h", inputs, at)).toMatchObject({ value: null, ready: false })
  })

  it("candles that do not reach the window's start, or the first sample, leave it not ready", () => {
    expect(evaluateMetric("price_change", "1h", windowInputs(fresh, interval, at, bars(60).slice(1)), at).ready)
      .toBe(false)
    // Without the last closed bar, the candles end more than three intervals before the sample's flows begin.
    expect(evaluateMetric("price_change", "1h", windowInputs(fresh, interval, at, bars(59)), at).ready).toBe(false)
  })

  it("metrics candles cannot give stay not ready until the samples cover the window", () => {
    const inputs = windowInputs(fresh, interval, at, bars(60))
    for (const metric of ["cvd", "taker_ratio", "oi_delta", "order_imbalance"] as const) {
      expect(evaluateMetric(metric, "1h", inputs, at)).toMatchObject({ value: null, ready: false })
    }
  })
})
