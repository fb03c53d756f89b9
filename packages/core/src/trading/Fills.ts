import { tradingDefaults } from "../accounts/TradingDefaults.js"
import type { MarginTable } from "../venues/MarginTiers.js"
import type { SymbolSpec } from "../venues/Venue.js"
import { roundMoney } from "./Money.js"

/** How orders fill and what they cost: the same terms for a backtest, a paper account and a live one's ledger. */
export interface TradingTerms {
  /** Fee of an order that takes liquidity (market, stop), a fraction of its notional. */
  readonly takerFeeRate: number
  /** Fee of a resting order that is filled (a take profit), a fraction of its notional. */
  readonly makerFeeRate: number
  /** Adverse move of a market or stop fill, a fraction of the price. */
  readonly slippage: number
  /** `fixed`: `slippage` on every market fill; `volume`: plus an impact growing with the order's share of the bar's volume. */
  readonly slippageModel: SlippageModel
  /** The symbol's rules at its venue: the lot orders are rounded to, their minimums, its margin brackets and liquidation fee. */
  readonly rules: SymbolSpec
}

export type SlippageModel = "fixed" | "volume"

/**
 * The square-root law of market impact (Almgren et al. 2005; Tóth et al. 2011): an order of `q`
 * against a bar that traded `v` moves the price by about `k·√(q/v)`. k = 0.1 is the conservative
 * end of the published range for liquid crypto perpetuals.
 */
export const impactCoefficient = 0.1

/** The adverse move of a market fill of `quantity` when the last closed bar traded `volume`. */
export const slippageOf = (terms: TradingTerms, quantity: number, volume: number): number =>
  terms.slippageModel === "fixed" || quantity <= 0
    ? terms.slippage
    : terms.slippage + impactCoefficient * Math.sqrt(volume > 0 ? quantity / volume : 1)

/** A market fill's price: `price` moved against the taker (`side` +1 buys, -1 sells) by `slippage`. */
export const takerPrice = (price: number, side: 1 | -1, slippage: number): number => price * (1 + side * slippage)

/** What closes a position besides a decision. */
export type ExitTrigger = "take_profit" | "stop_loss" | "liquidation"

/** What closes a live position besides a decision: an exit, or the risk firewall flattening the account (at market). */
export type CloseTrigger = ExitTrigger | "flatten"

/**
 * Where a protective exit of a position (`dir` +1 long, -1 short) fills once the price has reached
 * `level`, first seen at `seen` (a bar's open when it gapped past the level, else the level): a
 * stop is a market order, at `seen` with slippage; a take profit a resting limit, at `seen`, never
 * worse than its level; a liquidation at its price, fee apart.
 */
export const exitPrice = (trigger: CloseTrigger, dir: 1 | -1, seen: number, terms: TradingTerms): number =>
  trigger === "stop_loss" || trigger === "flatten" ? takerPrice(seen, dir === 1 ? -1 : 1, terms.slippage) : seen

/** How an entry order fills: at once at market, or resting until the price reaches its level. */
export type EntryType = "market" | "limit" | "stop"

/**
 * The fee of a fill of `notional`: the maker rate for a resting order that was filled (a take
 * profit, a limit entry), the taker rate otherwise (a liquidation's is `liquidationFee`).
 */
export const feeOf = (notional: number, kind: CloseTrigger | EntryType, terms: TradingTerms): number =>
  roundMoney(notional * (kind === "take_profit" || kind === "limit" ? terms.makerFeeRate : terms.takerFeeRate))

/**
 * Whether a limit or stop entry (`side` +1 buys, -1 sells) at `level` is reached at `price` (a
 * mark, a bar's open, or the bar's extreme that matters): a buy limit at or below its level, a buy
 * stop at or above it; a sell the other way round.
 */
export const entryReached = (type: "limit" | "stop", side: 1 | -1, level: number, price: number): boolean =>
  (type === "limit" ? -1 : 1) * side * (price - level) >= 0

/** Whether an entry is reached by a falling price (a buy limit, a sell stop) rather than a rising one. */
export const reachedFromAbove = (type: "limit" | "stop", side: 1 | -1): boolean => (type === "limit") === (side === 1)

/** The price of a bar that reaches an entry, if any does: its low for one reached from above, else its high. */
export const reachingPrice = (
  type: "limit" | "stop",
  side: 1 | -1,
  bar: { readonly high: number; readonly low: number }
) => reachedFromAbove(type, side) ? bar.low : bar.high

/**
 * Where a resting entry fills once reached, first seen at `seen` (a bar's open when it gapped past
 * the level, else the level): a limit at `seen`, its level or better; a stop, which becomes a
 * market order, at `seen` with slippage.
 */
export const entryPrice = (type: "limit" | "stop", side: 1 | -1, seen: number, terms: TradingTerms): number =>
  type === "limit" ? seen : takerPrice(seen, side, terms.slippage)

/** The terms of paper trading (and of a backtest's defaults): `tradingDefaults` with the symbol's rules. */
export const paperTerms = (rules: SymbolSpec): TradingTerms => ({
  takerFeeRate: tradingDefaults.feeRate,
  makerFeeRate: tradingDefaults.makerFeeRate,
  slippage: tradingDefaults.slippage,
  slippageModel: "fixed",
  rules
})

/** The rules of a symbol its venue does not list (a dataset's own): no lot, no minimums, the venue's margin table. */
export const unlistedRules = (symbol: string, margin: MarginTable): SymbolSpec => ({
  symbol,
  tick_size: 0,
  lot_size: 0,
  min_quantity: 0,
  min_notional: 0,
  max_leverage: margin.tiers[0]!.max_leverage,
  margin
})
