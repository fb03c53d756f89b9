import { describe, expect, it } from "@effect/vitest"
import { hostTa } from "../../src/indicators/TaSource.js"
import { builtinFactors, findFactor } from "../../src/ranking/FactorCatalogue.js"
import { factorValue, type SymbolInputs } from "../../src/ranking/FactorTable.js"
import type { Candle } from "../../src/venues/Venue.js"
import { randomWalk, referenceFactors } from "./ReferenceFactors.js"

const value = (key: string, candles: ReadonlyArray<Candle>, market: SymbolInputs["market"] = {}) =>
  factorValue(findFactor(key)!, { symbol: "X", candles, market })

/** Candles from closes (high and low a step either side unless given), volume 1 unless given. */
const bars = (closes: ReadonlyArray<number>, extra: Partial<Omit<Candle, "close">> = {}): Array<Candle> =>
  closes.map((close, i) => ({
    time: i * 3_600_000,
    open: close,
    high: close + 1,
    low: close - 1,
    close,
    volume: 1,
    ...extra
  }))

const expectClose = (actual: number | null, expected: number | null) => {
  if (expected === null) expect(actual).toBeNull()
  else {
    expect(actual).toBeTypeOf("number")
    expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)))
  }
}

const candleKeys = builtinFactors.filter((f) => f.input.kind === "ta").map((f) => f.key)

describe("the factor library", () => {
  it("has at least 24 built-in factors in the five categories, ids and keys unique", () => {
    expect(builtinFactors.length).toBeGreaterThanOrEqual(24)
    expect(new Set(builtinFactors.map((f) => f.category))).toEqual(
      new Set(["momentum", "trend", "volatility", "volume", "microstructure"])
    )
    expect(new Set(builtinFactors.map((f) => f.id)).size).toBe(builtinFactors.length)
    expect(new Set(builtinFactors.map((f) => f.key)).size).toBe(builtinFactors.length)
    expect(new Set(candleKeys)).toEqual(new Set(Object.keys(referenceFactors)))
  })

  it("computes every candle factor as its reference formula does, at every length of a 600-bar walk", () => {
    const candles = randomWalk(600)
    for (const key of candleKeys) {
      for (const n of [600, 499, 120, 60, 51, 50, 49, 35, 34, 31, 30, 28, 27, 22, 21, 20, 15, 14, 8, 2, 1, 0]) {
        const window = candles.slice(0, n)
        try {
          expectClose(value(key, window), referenceFactors[key]!(window))
        } catch (e) {
          throw new Error(`${key} over ${n} bars: ${(e as Error).message}`)
        }
      }
    }
  })

  it("matches values worked out by hand on short series", () => {
    const up = bars([100, 105, 110])
    expect(hostTa.roc(up, 2)).toBe(10)
    expect(hostTa.priceVsSma(bars([1, 2, 3]), 3)).toBe(50)
    // Returns +10% and -10%: mean 0, standard deviation 10%.
    expectClose(hostTa.volatility(bars([100, 110, 99]), 2) as number, 10)
    // Closes 1, 2, 3, 4: slope 1 a bar over a mean of 2.5.
    expectClose(hostTa.slope(bars([1, 2, 3, 4]), 4) as number, 40)
    // High 12, low 8 over the window, close 10.
    expect(hostTa.range([{ ...bars([10])[0]!, high: 12, low: 9 }, { ...bars([10])[0]!, high: 11, low: 8 }], 2)).toBe(40)
    // Close 9 in a 14-bar range 8..12.
    const k = [...bars(Array(13).fill(10)).map((c) => ({ ...c, high: 12, low: 8 })), {
      ...bars([9])[0]!,
      high: 9.5,
      low: 8.5
    }]
    expect(hostTa.stochK(k, 14)).toBe(25)
    // Volumes 1, 3, then 8: 8 over the mean of 1 and 3.
    expect(hostTa.volumeRatio(bars([1, 1, 1], {}).map((c, i) => ({ ...c, volume: [1, 3, 8][i]! })), 2)).toBe(4)
    // Typical prices 10 (volume 1) and 20 (volume 3): VWAP 17.5, close 20.
    const flatBars = (p: number, volume: number): Candle => ({ time: 0, open: p, high: p, low: p, close: p, volume })
    expectClose(hostTa.vwapDev([flatBars(10, 1), flatBars(20, 3)], 2) as number, (20 - 17.5) / 17.5 * 100)
    // Typical price up 10 -> 20 (flow 20 x 2 = 40), then down to 15 (flow 15 x 4 = 60): MFI = 100 - 100 / (1 + 40/60) = 40.
    expectClose(hostTa.mfi([flatBars(10, 1), flatBars(20, 2), flatBars(15, 4)], 2) as number, 40)
    // Up (volume 2), up (4), down (3): OBV 2, 6, 3, least-squares slope 0.5 a bar over a mean volume of 3.
    const obv = [flatBars(10, 1), flatBars(11, 2), flatBars(12, 4), flatBars(11, 3)]
    expectClose(hostTa.obvSlope(obv, 3) as number, 0.5 / 3)
    // Highs and lows rise by 1 every bar: only +DM, so DX and ADX are 100.
    const trend = Array.from({ length: 30 }, (_, i) => flatBars(100 + i, 1)).map((c) => ({
      ...c,
      high: c.close + 1,
      low: c.close - 1
    }))
    expect(hostTa.adx(trend, 14)).toBe(100)
    // Closes symmetric around the last one: %B one half.
    expectClose(hostTa.percentB(bars([9, 11, 10, 10]), 4, 2) as number, 0.5)
  })

  it("answers what flat prices imply: no change, no trend, no range, and null where a ratio is 0/0", () => {
    const flat = Array.from(
      { length: 120 },
      (_, i): Candle => ({ time: i, open: 50, high: 50, low: 50, close: 50, volume: 10 })
    )
    const values = Object.fromEntries(candleKeys.map((key) => [key, value(key, flat)]))
    expect(values).toEqual({
      // Wilder's formula with no losses, as ta.rsi has always answered.
      rsi_14: 100,
      rsi_7: 100,
      roc_10: 0,
      roc_20: 0,
      return_30: 0,
      stoch_k_14: null,
      price_vs_sma_20: 0,
      price_vs_sma_50: 0,
      ema_spread_12_26: 0,
      macd_histogram: 0,
      adx_14: 0,
      linreg_slope_20: 0,
      atr_pct_14: 0,
      bollinger_width_20: 0,
      bollinger_percent_b_20: null,
      realized_vol_20: 0,
      hl_range_20: 0,
      obv_slope_20: 0,
      volume_ratio_20: 1,
      vwap_deviation_20: 0,
      mfi_14: null
    })
  })

  it("answers null for the volume factors when nothing traded, and the price factors as before", () => {
    const walk = randomWalk(120)
    const still = walk.map((c) => ({ ...c, volume: 0 }))
    for (const key of ["obv_slope_20", "volume_ratio_20", "vwap_deviation_20", "mfi_14"]) {
      expect(value(key, still)).toBeNull()
    }
    for (const key of ["rsi_14", "adx_14", "atr_pct_14", "realized_vol_20"]) {
      expect(value(key, still)).toBe(value(key, walk))
    }
  })

  it("answers null with too few bars, and for a period that is not a whole number of at least 1", () => {
    const walk = randomWalk(60)
    for (const key of candleKeys) {
      expect(value(key, [])).toBeNull()
      expect(value(key, walk.slice(0, 1))).toBeNull()
    }
    for (const period of [0, -3, 2.5, NaN, Infinity, "10" as unknown as number]) {
      expect(hostTa.roc(walk, period)).toBeNull()
      expect(hostTa.adx(walk, period)).toBeNull()
      expect(hostTa.mfi(walk, period)).toBeNull()
      expect(hostTa.bandwidth(walk, period)).toBeNull()
    }
    expect(hostTa.bandwidth(walk, 20, NaN)).toBeNull()
    // ADX needs two periods: one to smooth the moves, one to average DX.
    expect(hostTa.adx(walk.slice(0, 27), 14)).toBeNull()
    expect(hostTa.adx(walk.slice(0, 28), 14)).not.toBeNull()
  })

  it("reads microstructure factors from the sampled market values, null when absent or not finite", () => {
    const market = { funding_rate: 0.0001, taker_buy_ratio: 0.6, depth_imbalance: -0.2, open_interest_change: null }
    expect(value("funding_rate", [], market)).toBe(0.0001)
    expect(value("taker_buy_ratio", [], market)).toBe(0.6)
    expect(value("depth_imbalance", [], market)).toBe(-0.2)
    expect(value("oi_change", [], market)).toBeNull()
    expect(value("depth_imbalance", [], {})).toBeNull()
    expect(value("funding_rate", [], { funding_rate: NaN })).toBeNull()
  })

  it("finds a factor by key or by id, and nothing else", () => {
    expect(findFactor("rsi_14")?.id).toBe(1)
    expect(findFactor("1")?.key).toBe("rsi_14")
    expect(findFactor("25")?.key).toBe("depth_imbalance")
    expect(findFactor("26")).toBeUndefined()
    expect(findFactor("RSI_14")).toBeUndefined()
    expect(findFactor("toString")).toBeUndefined()
  })
})
