import { describe, expect, it } from "@effect/vitest"
import { conditionMet, type MarketSample, metricValue, windowOf } from "@trading-platform/core"

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
