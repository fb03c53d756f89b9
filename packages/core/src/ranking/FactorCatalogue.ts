import type { IndicatorName } from "../indicators/TaSource.js"

export type FactorCategory = "momentum" | "trend" | "volatility" | "volume" | "microstructure"

/** Market data a microstructure factor reads, sampled when the table is computed. */
export type MarketInput = "funding_rate" | "open_interest_change" | "taker_buy_ratio" | "depth_imbalance"

/** How a factor is computed: a `ta` helper over the candles, or one sampled market value. */
export type FactorInput =
  | { readonly kind: "ta"; readonly helper: IndicatorName; readonly args: ReadonlyArray<number> }
  | { readonly kind: "market"; readonly input: MarketInput }

export interface FactorDefinition {
  readonly id: number
  readonly key: string
  readonly name: string
  readonly category: FactorCategory
  /** Whether a higher value ranks a symbol higher ("better") or lower ("worse"). */
  readonly higher_is: "better" | "worse"
  readonly description: string
  readonly input: FactorInput
}

const ta = (helper: IndicatorName, ...args: ReadonlyArray<number>): FactorInput => ({ kind: "ta", helper, args })
const market = (input: MarketInput): FactorInput => ({ kind: "market", input })

/**
 * The built-in factors, in a fixed order; ids are stable. `docs/ranking.md` gives each formula.
 * Every value is scale-free (a percent, a ratio or an index), so symbols at any price compare.
 */
export const builtinFactors: ReadonlyArray<FactorDefinition> = [
  {
    id: 1,
    key: "rsi_14",
    name: "RSI 14",
    category: "momentum",
    higher_is: "better",
    input: ta("rsi", 14),
    description: "Wilder's relative strength index over 14 bars, 0 to 100"
  },
  {
    id: 2,
    key: "rsi_7",
    name: "RSI 7",
    category: "momentum",
    higher_is: "better",
    input: ta("rsi", 7),
    description: "Wilder's relative strength index over 7 bars, 0 to 100"
  },
  {
    id: 3,
    key: "roc_10",
    name: "Rate of change 10",
    category: "momentum",
    higher_is: "better",
    input: ta("roc", 10),
    description: "Percent change of the close over 10 bars"
  },
  {
    id: 4,
    key: "roc_20",
    name: "Rate of change 20",
    category: "momentum",
    higher_is: "better",
    input: ta("roc", 20),
    description: "Percent change of the close over 20 bars"
  },
  {
    id: 5,
    key: "stoch_k_14",
    name: "Stochastic %K 14",
    category: "momentum",
    higher_is: "better",
    input: ta("stochK", 14),
    description: "Where the close sits in the 14-bar high-low range, 0 to 100"
  },
  {
    id: 6,
    key: "return_30",
    name: "30-bar return",
    category: "momentum",
    higher_is: "better",
    input: ta("roc", 30),
    description: "Percent change of the close over 30 bars"
  },
  {
    id: 7,
    key: "price_vs_sma_20",
    name: "Price vs SMA 20",
    category: "trend",
    higher_is: "better",
    input: ta("priceVsSma", 20),
    description: "Close above (+) or below (-) its 20-bar simple average, in percent"
  },
  {
    id: 8,
    key: "price_vs_sma_50",
    name: "Price vs SMA 50",
    category: "trend",
    higher_is: "better",
    input: ta("priceVsSma", 50),
    description: "Close above (+) or below (-) its 50-bar simple average, in percent"
  },
  {
    id: 9,
    key: "ema_spread_12_26",
    name: "EMA 12/26 spread",
    category: "trend",
    higher_is: "better",
    input: ta("emaSpread", 12, 26),
    description: "The 12-bar EMA above (+) or below (-) the 26-bar EMA, in percent of the latter"
  },
  {
    id: 10,
    key: "macd_histogram",
    name: "MACD histogram",
    category: "trend",
    higher_is: "better",
    input: ta("macdPct", 12, 26, 9),
    description: "MACD (12, 26, 9) line minus its signal line, in percent of the close"
  },
  {
    id: 11,
    key: "adx_14",
    name: "ADX 14",
    category: "trend",
    higher_is: "better",
    input: ta("adx", 14),
    description: "Wilder's average directional index over 14 bars: trend strength, 0 to 100, either direction"
  },
  {
    id: 12,
    key: "linreg_slope_20",
    name: "Linear-regression slope 20",
    category: "trend",
    higher_is: "better",
    input: ta("slope", 20),
    description: "Least-squares slope of the last 20 closes, in percent of their mean per bar"
  },
  {
    id: 13,
    key: "atr_pct_14",
    name: "ATR % 14",
    category: "volatility",
    higher_is: "worse",
    input: ta("atrPct", 14),
    description: "Wilder's average true range over 14 bars, in percent of the close"
  },
  {
    id: 14,
    key: "bollinger_width_20",
    name: "Bollinger width 20",
    category: "volatility",
    higher_is: "worse",
    input: ta("bandwidth", 20, 2),
    description: "Width of the 20-bar, 2-deviation Bollinger bands, in percent of the middle band"
  },
  {
    id: 15,
    key: "bollinger_percent_b_20",
    name: "Bollinger %B 20",
    category: "volatility",
    higher_is: "better",
    input: ta("percentB", 20, 2),
    description: "Where the close sits between the 20-bar, 2-deviation Bollinger bands: 0 lower, 1 upper"
  },
  {
    id: 16,
    key: "realized_vol_20",
    name: "Realised volatility 20",
    category: "volatility",
    higher_is: "worse",
    input: ta("volatility", 20),
    description: "Standard deviation of the last 20 bar-to-bar returns, in percent (not annualised)"
  },
  {
    id: 17,
    key: "hl_range_20",
    name: "High-low range 20",
    category: "volatility",
    higher_is: "worse",
    input: ta("range", 20),
    description: "Highest high minus lowest low of the last 20 bars, in percent of the close"
  },
  {
    id: 18,
    key: "obv_slope_20",
    name: "OBV slope 20",
    category: "volume",
    higher_is: "better",
    input: ta("obvSlope", 20),
    description: "Least-squares slope of on-balance volume over 20 bars, in mean bar volumes per bar"
  },
  {
    id: 19,
    key: "volume_ratio_20",
    name: "Volume ratio 20",
    category: "volume",
    higher_is: "better",
    input: ta("volumeRatio", 20),
    description: "The last bar's volume over the mean volume of the 20 bars before it"
  },
  {
    id: 20,
    key: "vwap_deviation_20",
    name: "VWAP deviation 20",
    category: "volume",
    higher_is: "better",
    input: ta("vwapDev", 20),
    description: "Close above (+) or below (-) the 20-bar volume-weighted average price, in percent"
  },
  {
    id: 21,
    key: "mfi_14",
    name: "Money flow index 14",
    category: "volume",
    higher_is: "better",
    input: ta("mfi", 14),
    description: "Volume-weighted RSI of the typical price over 14 bars, 0 to 100"
  },
  {
    id: 22,
    key: "funding_rate",
    name: "Funding rate",
    category: "microstructure",
    higher_is: "worse",
    input: market("funding_rate"),
    description: "The current funding rate per funding period (a fraction); high funding means crowded longs"
  },
  {
    id: 23,
    key: "oi_change",
    name: "Open interest change",
    category: "microstructure",
    higher_is: "better",
    input: market("open_interest_change"),
    description:
      "Percent change of open interest over the timeframe's last bar, from the signal engine's samples (symbols of enabled pools only)"
  },
  {
    id: 24,
    key: "taker_buy_ratio",
    name: "Taker buy ratio",
    category: "microstructure",
    higher_is: "better",
    input: market("taker_buy_ratio"),
    description: "Share of the last 200 trades' size bought by takers, 0 to 1"
  },
  {
    id: 25,
    key: "depth_imbalance",
    name: "Depth imbalance",
    category: "microstructure",
    higher_is: "better",
    input: market("depth_imbalance"),
    description: "(bid size - ask size) / (bid size + ask size) over the top 20 levels of the order book, -1 to 1"
  }
]

export const factorKeys = builtinFactors.map((f) => f.key)

/** A factor by its key (`rsi_14`) or its id (`1`). */
export const findFactor = (ref: string): FactorDefinition | undefined =>
  /^\d+$/.test(ref) ? builtinFactors.find((f) => f.id === Number(ref)) : builtinFactors.find((f) => f.key === ref)

/** The `ta` call a program makes for a factor, or null for a microstructure factor. */
export const taCall = (factor: FactorDefinition) =>
  factor.input.kind === "ta" ? `ta.${factor.input.helper}(data.candles, ${factor.input.args.join(", ")})` : null
