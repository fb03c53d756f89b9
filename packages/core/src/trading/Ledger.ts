import type { Decision } from "../sandbox/Decision.js"
import { toSignificant } from "../stats/Significant.js"
import type { MarginTable } from "../venues/MarginTiers.js"
import { type Breach, orderBreach, type OrderTerms, refusalOf, roundQuantity } from "../venues/SymbolRules.js"
import type { SymbolSpec } from "../venues/Venue.js"
import type { ExitTrigger } from "./Fills.js"
import { fromMoney, type Money, roundMoney, toMoney } from "./Money.js"

/** An open position in the ledger: isolated margin (a `Money` amount), frozen out of the account's cash. */
export interface Held {
  readonly side: "long" | "short"
  readonly size: number
  readonly entry_price: number
  readonly leverage: number
  readonly margin: number
}

/** What one fill does to an account: exact deltas of `current_cash` and `frozen_cash`, and the position left. */
export interface FillEffect {
  readonly position: Held | null
  readonly cash: Money
  readonly frozen: Money
  /** Profit of the part that reduced the position, before fees, rounded as money. */
  readonly realized: number
  /** How much of the fill reduced the position (0 for a pure entry). */
  readonly closed: number
}

/** A sum or difference of sizes without binary noise: read at the 15 significant figures a double holds. */
const tidy = (x: number): number => toSignificant(x, 15)

/** +1 for a long, -1 for a short: signs every price comparison so one code path serves both sides. */
export const dir = (side: "long" | "short"): 1 | -1 => (side === "long" ? 1 : -1)

/**
 * Applies a fill, for a backtest and a paper or live ledger alike: the part against the position
 * closes it (its margin, all of it when it closes whole, and its profit return to cash), the rest
 * opens or adds with `quantity × price / leverage` of margin frozen, and the fee (already rounded
 * as money) leaves cash. Each amount is rounded to money once, so the deltas are exact.
 */
export const applyFill = (
  held: Held | null,
  fill: {
    readonly side: "buy" | "sell"
    readonly quantity: number
    readonly price: number
    readonly fee: number
    readonly leverage: number
  }
): FillEffect => {
  const fillSide = fill.side === "buy" ? "long" : "short"
  let cash = -toMoney(fill.fee)
  let frozen = 0n
  let realized = 0
  let closed = 0
  let position = held
  let rest = fill.quantity
  if (held !== null && held.side !== fillSide) {
    closed = Math.min(rest, held.size)
    const whole = closed === held.size
    const margin = toMoney(held.margin)
    const released = whole ? margin : toMoney(held.margin * (closed / held.size))
    realized = roundMoney(closed * (fill.price - held.entry_price) * dir(held.side))
    cash += released + toMoney(realized)
    frozen -= released
    rest = tidy(rest - closed)
    position = whole ? null : { ...held, size: tidy(held.size - closed), margin: fromMoney(margin - released) }
  }
  if (rest > 0) {
    const margin = toMoney((rest * fill.price) / fill.leverage)
    cash -= margin
    frozen += margin
    position = position === null
      ? { side: fillSide, size: rest, entry_price: fill.price, leverage: fill.leverage, margin: fromMoney(margin) }
      : {
        ...position,
        size: tidy(position.size + rest),
        entry_price: (position.entry_price * position.size + fill.price * rest) / (position.size + rest),
        margin: fromMoney(toMoney(position.margin) + margin)
      }
  }
  return { position, cash, frozen, realized, closed }
}

/**
 * An order the symbol's rules refuse. Its sentence is made when read: a backtest whose balance is
 * spent is refused at every bar and reads none.
 */
class Refusal {
  readonly _tag = "Refused"
  constructor(
    readonly side: "buy" | "sell",
    readonly quantity: number,
    private readonly rules: SymbolSpec,
    private readonly order: OrderTerms,
    private readonly breach: Breach
  ) {}
  get reason(): string {
    return refusalOf(this.rules, this.order, this.breach)
  }
}

/** The order a decision asks for; why there is none; or the order the symbol's rules refuse, and why. */
export type Sizing =
  | { readonly _tag: "Order"; readonly side: "buy" | "sell"; readonly quantity: number }
  | { readonly _tag: "Nothing"; readonly reason: string }
  | Refusal

/**
 * Sizes a decision, for a backtest and a paper or live run alike: `close` closes
 * `target_portion_of_position` (default 1) of the position; a `reduce_only` `buy`/`sell` closes
 * that portion of an opposite position and never opens one; otherwise `buy`/`sell` spend
 * `target_portion_of_balance` (default 1) of the free cash on margin plus fee, after closing an
 * opposite position (one order that reverses it). `price` is the expected fill price. What it
 * opens (or a part it closes) is rounded down to the symbol's lot and must meet the symbol's
 * minimums and leverage cap; a whole position closes as it is.
 */
export const sizeOrder = (
  decision: Decision,
  held: Held | null,
  account: {
    readonly freeCash: number
    readonly feeRate: number
    readonly leverage: number
    readonly price: number
    readonly rules: SymbolSpec
  }
): Sizing => {
  if (decision.operation === "hold") return { _tag: "Nothing", reason: "hold" }
  const { rules } = account
  const reducing = (side: "buy" | "sell"): Sizing => {
    if (held === null) return { _tag: "Nothing", reason: "no position to close" }
    const portion = decision.target_portion_of_position ?? 1
    const quantity = portion === 1 ? held.size : roundQuantity(rules, held.size * portion)
    return quantity > 0 ? { _tag: "Order", side, quantity } : { _tag: "Nothing", reason: "less than a lot to close" }
  }
  if (decision.operation === "close") return reducing(held?.side === "long" ? "sell" : "buy")
  const side = decision.operation
  if (decision.reduce_only === true) {
    return held !== null && held.side === (side === "buy" ? "long" : "short")
      ? { _tag: "Nothing", reason: "reduce_only: the order would add to the position" }
      : reducing(side)
  }
  const closing = held !== null && held.side !== (side === "buy" ? "long" : "short") ? held : null
  // Cash free once the opposite position is closed at the expected price.
  const freed = closing === null
    ? 0
    : closing.margin + closing.size * (account.price - closing.entry_price) * dir(closing.side) -
      closing.size * account.price * account.feeRate
  const spend = (decision.target_portion_of_balance ?? 1) * (account.freeCash + freed)
  const margin = spend / (1 + account.leverage * account.feeRate)
  const wanted = margin > 0 ? (margin * account.leverage) / account.price : 0
  const order = { quantity: wanted, price: account.price, leverage: account.leverage }
  const breach = wanted > 0 ? orderBreach(rules, order) : null
  // A reversal whose new side the rules refuse still closes the old one.
  if (breach !== null && closing === null) return new Refusal(side, wanted, rules, order, breach)
  const quantity = tidy((closing?.size ?? 0) + (breach === null ? roundQuantity(rules, wanted) : 0))
  return quantity > 0 ? { _tag: "Order", side, quantity } : { _tag: "Nothing", reason: "no free cash to trade" }
}

/**
 * The price at which a position is liquidated: where the `backing` it has (its margin when
 * isolated) plus its loss leaves just the venue's maintenance margin at that price. The requirement
 * is piecewise linear in the price, so the root is solved bracket by bracket; it is unique, since
 * the position's surplus moves one way with the price. 0 for a long that cannot be liquidated.
 */
export const liquidationPrice = (held: Held, table: MarginTable, backing: number = held.margin): number => {
  const d = dir(held.side)
  const { entry_price: entry, size } = held
  const tiers = table.tiers
  // Inside bracket k, maintenanceMargin(n) = n · rate_k − deduction_k.
  let deduction = 0
  for (let k = 0; k < tiers.length; k++) {
    const rate = tiers[k]!.maintenance_rate
    if (k > 0) deduction += tiers[k]!.notional_floor * (rate - tiers[k - 1]!.maintenance_rate)
    const price = (size * entry - d * (backing + deduction)) / (size * (1 - d * rate))
    const notional = size * price
    if (notional >= tiers[k]!.notional_floor && notional < (tiers[k + 1]?.notional_floor ?? Infinity)) {
      return Math.max(price, 0)
    }
  }
  return 0
}

/** A liquidation's fee: the venue's rate on the notional, out of what the position has left, never more. */
export const liquidationFee = (held: Held, price: number, table: MarginTable, backing: number = held.margin): number =>
  roundMoney(Math.max(
    0,
    Math.min(
      held.size * price * table.liquidation_fee_rate,
      backing + dir(held.side) * held.size * (price - held.entry_price)
    )
  ))

/** A funding payment to the holder of `held` (negative when it pays): longs pay shorts `rate` of the notional at `mark`. */
export const fundingPayment = (held: Pick<Held, "side" | "size">, rate: number, mark: number): number =>
  roundMoney(-dir(held.side) * held.size * mark * rate)

/**
 * The stop a position has now: its stop loss, or its trailing stop (`trail` below the best price
 * since it opened for a long, above it for a short) when that is nearer; null for neither.
 */
export const stopOf = (
  side: "long" | "short",
  stopLoss: number | null,
  trail: number | null,
  best: number
): number | null => {
  if (trail === null) return stopLoss
  const d = dir(side)
  const trailing = best * (1 - d * trail)
  return stopLoss === null || d * (trailing - stopLoss) > 0 ? trailing : stopLoss
}

/** The best price a position has seen, once `price` is seen too: the highest for a long, the lowest for a short. */
export const bestOf = (side: "long" | "short", best: number, price: number): number =>
  side === "long" ? Math.max(best, price) : Math.min(best, price)

/**
 * Which protective exit the mark has reached, if any: the liquidation first, then the stop loss
 * (when both are crossed in one step the loss is the safer assumption), then the take profit.
 */
export const exitTriggered = (
  position: Held & { readonly take_profit_price: number | null; readonly stop_loss_price: number | null },
  mark: number,
  liquidation: number
): ExitTrigger | null => {
  const d = dir(position.side)
  if (d * (mark - liquidation) <= 0) return "liquidation"
  if (position.stop_loss_price !== null && d * (mark - position.stop_loss_price) <= 0) return "stop_loss"
  if (position.take_profit_price !== null && d * (mark - position.take_profit_price) >= 0) return "take_profit"
  return null
}
