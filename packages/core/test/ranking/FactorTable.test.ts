import { describe, expect, it } from "@effect/vitest"
import { findFactor } from "../../src/ranking/FactorCatalogue.js"
import { normalise, rankSymbols, type SymbolInputs } from "../../src/ranking/FactorTable.js"
import { ranks, spearman, summarise } from "../../src/ranking/InformationCoefficient.js"

const symbol = (name: string, market: SymbolInputs["market"]): SymbolInputs => ({ symbol: name, candles: [], market })
const funding = findFactor("funding_rate")!
const taker = findFactor("taker_buy_ratio")!

/** z-scores by the textbook: (x - mean) / population standard deviation. */
const z = (xs: ReadonlyArray<number>) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length)
  return xs.map((x) => (x - m) / sd)
}

describe("normalising a factor across symbols", () => {
  it("answers z-scores with the population standard deviation, null kept null", () => {
    const out = normalise([1, 2, null, 3])
    expect(out[2]).toBeNull()
    expect(out[0]).toBeCloseTo(-Math.sqrt(1.5), 12)
    expect(out[1]).toBe(0)
    expect(out[3]).toBeCloseTo(Math.sqrt(1.5), 12)
  })

  it("clips z-scores at ±3, so one outlier cannot dominate", () => {
    // Ten zeros and one 100: the outlier's z-score is about 3.16 before clipping.
    const values = [...Array(10).fill(0), 100]
    expect(z(values)[10]).toBeGreaterThan(3.1)
    const out = normalise(values)
    expect(out[10]).toBe(3)
    expect(out[0]).toBeCloseTo(z(values)[0]!, 12)
    expect(normalise([...Array(10).fill(0), -100])[10]).toBe(-3)
  })

  it("scores 0 for every value when they cannot be told apart: one value, or all equal", () => {
    expect(normalise([5, null])).toEqual([0, null])
    expect(normalise([2, 2, 2])).toEqual([0, 0, 0])
    expect(normalise([null, null])).toEqual([null, null])
  })
})

describe("ranking a hand-made universe", () => {
  it("flips factors where lower is better, averages with equal weights and sorts by score", () => {
    const universe = [
      symbol("CCC", { funding_rate: 0.03, taker_buy_ratio: 0.3 }),
      symbol("AAA", { funding_rate: 0.01, taker_buy_ratio: 0.7 }),
      symbol("BBB", { funding_rate: 0.02, taker_buy_ratio: 0.5 })
    ]
    const { errors, rows } = rankSymbols(universe, [[funding, 1], [taker, 1]])
    expect(errors).toEqual({})
    expect(rows.map((r) => [r.rank, r.symbol])).toEqual([[1, "AAA"], [2, "BBB"], [3, "CCC"]])
    const s = Math.sqrt(1.5)
    expect(rows[0]!.normalized.funding_rate).toBeCloseTo(s, 12)
    expect(rows[0]!.normalized.taker_buy_ratio).toBeCloseTo(s, 12)
    expect(rows[0]!.score).toBeCloseTo(s, 12)
    expect(rows[1]!.score).toBe(0)
    expect(rows[2]!.score).toBeCloseTo(-s, 12)
    expect(rows[0]!.factors).toEqual({ funding_rate: 0.01, taker_buy_ratio: 0.7 })
    expect(rows[0]!.missing).toEqual([])
  })

  it("combines with the given weights", () => {
    const universe = [
      symbol("AAA", { funding_rate: 0.01, taker_buy_ratio: 0.7 }),
      symbol("BBB", { funding_rate: 0.02, taker_buy_ratio: 0.5 }),
      symbol("CCC", { funding_rate: 0.03, taker_buy_ratio: 0.9 })
    ]
    const { rows } = rankSymbols(universe, [[funding, 3], [taker, 1]])
    const f = z([0.01, 0.02, 0.03]).map((x) => -x), t = z([0.7, 0.5, 0.9])
    const expected = [0, 1, 2].map((i) => (3 * f[i]! + t[i]!) / 4)
    expect(rows.map((r) => r.symbol)).toEqual(["AAA", "BBB", "CCC"])
    rows.forEach((r) => expect(r.score).toBeCloseTo(expected[["AAA", "BBB", "CCC"].indexOf(r.symbol)]!, 12))
    // With the taker ratio alone CCC leads.
    expect(rankSymbols(universe, [[funding, 0], [taker, 1]]).rows[0]!.symbol).toBe("CCC")
  })

  it("ranks a symbol missing a factor on the others, says so, and leaves out one with no data", () => {
    const universe = [
      symbol("AAA", { funding_rate: 0.01, taker_buy_ratio: 0.7 }),
      symbol("BBB", { funding_rate: 0.02, taker_buy_ratio: 0.5 }),
      symbol("DDD", { funding_rate: 0.005 }),
      symbol("EEE", {})
    ]
    const { errors, rows } = rankSymbols(universe, [[funding, 1], [taker, 1]])
    expect(errors).toEqual({ EEE: "no data for any chosen factor of positive weight" })
    const ddd = rows.find((r) => r.symbol === "DDD")!
    expect(ddd.missing).toEqual(["taker_buy_ratio"])
    expect(ddd.factors).toEqual({ funding_rate: 0.005, taker_buy_ratio: null })
    expect(Object.keys(ddd.normalized)).toEqual(["funding_rate"])
    // DDD has the lowest funding of the three and is scored on it alone.
    expect(ddd.score).toBeCloseTo(-z([0.01, 0.02, 0.005])[2]!, 12)
    expect(rows.map((r) => r.rank)).toEqual([1, 2, 3])
  })

  it("breaks ties by symbol, and never answers -0", () => {
    const universe = [symbol("ZZZ", { funding_rate: 0.01 }), symbol("AAA", { funding_rate: 0.01 })]
    const { rows } = rankSymbols(universe, [[funding, 1]])
    expect(rows.map((r) => r.symbol)).toEqual(["AAA", "ZZZ"])
    expect(Object.is(rows[0]!.score, 0)).toBe(true)
    expect(Object.is(rows[0]!.normalized.funding_rate, 0)).toBe(true)
  })
})

describe("the information coefficient", () => {
  it("ranks with ties sharing their mean rank", () => {
    expect(ranks([30, 10, 20, 20])).toEqual([4, 1, 2.5, 2.5])
  })

  it("is Spearman's correlation: 1 for any increasing relation, -1 for decreasing, null when undefined", () => {
    expect(spearman([1, 2, 3, 4], [1, 8, 27, 64])).toBeCloseTo(1, 12)
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1, 12)
    // Ranks 1..4 against 2, 1, 4, 3: 1 - 6 * 4 / (4 * 15) = 0.6.
    expect(spearman([1, 2, 3, 4], [20, 10, 40, 30])).toBeCloseTo(0.6, 12)
    expect(spearman([1, 2], [1, 2])).toBeNull()
    expect(spearman([1, 2, 3], [5, 5, 5])).toBeNull()
  })

  it("summarises with the mean, the t-statistic and the hit rate in the factor's direction", () => {
    const summary = summarise([0.1, 0.3, -0.1], "better")
    expect(summary.bars).toBe(3)
    expect(summary.mean).toBeCloseTo(0.1, 12)
    // Sample standard deviation 0.2: t = 0.1 / (0.2 / √3).
    expect(summary.t_stat).toBeCloseTo(0.1 / (0.2 / Math.sqrt(3)), 12)
    expect(summary.hit_rate).toBeCloseTo(2 / 3, 12)
    expect(summarise([0.1, 0.3, -0.1], "worse").hit_rate).toBeCloseTo(1 / 3, 12)
    expect(summarise([], "better")).toEqual({ bars: 0, mean: null, t_stat: null, hit_rate: null })
    expect(summarise([0.2], "better").t_stat).toBeNull()
  })
})
