import type { Decision } from "../sandbox/Decision.js"

/** An open position in the ledger: isolated margin, frozen out of the account's cash. */
export interface Held {
  readonly side: "long" | "short"
  readonly size: number
  readonly entry_price: number
  readonly leverage: number
  readonly margin: number
}

/** What one fill does to an account: deltas of `current_cash` and `frozen_cash`, and the position left. */
export interface FillEffect {
  readonly position: Held | null
  readonly cash: number
  readonly frozen: number
  /** Profit of the part that reduced the position, before fees. */
  readonly realized: number
  /** How much of the fill reduced the position (0 for a pure entry). */
  readonly closed: number
}

const dir = (side: "long" | "short") => (side === "long" ? 1 : -1)

/**
 * Applies a fill as the backtest engine does: the part against the position closes it (its margin
 * and profit return to cash), the rest opens or adds with `quantity × price / leverage` of margin
 * frozen, and the fee leaves cash.
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
  let cash = -fill.fee
  let frozen = 0
  let realized = 0
  let closed = 0
  let position = held
  let rest = fill.quantity
  if (held !== null && held.side !== fillSide) {
    closed = Math.min(rest, held.size)
    const released = held.margin * (closed / held.size)
    realized = closed * (fill.price - held.entry_price) * dir(held.side)
    cash += released + realized
    frozen -= released
    rest -= closed
    position = closed === held.size ? null : { ...held, size: held.size - closed, margin: held.margin - released }
  }
  if (rest > 0) {
    const margin = (rest * fill.price) / fill.leverage
    cash -= margin
    frozen += margin
    position = position === null
      ? { side: fillSide, size: rest, entry_price: fill.price, leverage: fill.leverage, margin }
      : {
        ...position,
        size: position.size + rest,
        entry_price: (position.entry_price * position.size + fill.price * rest) / (position.size + rest),
        margin: position.margin + margin
      }
  }
  return { position, cash, frozen, realized, closed }
}

/** The order a decision asks for, or why there is none. */
export type Sizing =
  | { readonly _tag: "Order"; readonly side: "buy" | "sell"; readonly quantity: number }
  | { readonly _tag: "Nothing"; readonly reason: string }

/**
 * Sizes a decision like the backtest engine: `close` closes the position; `buy`/`sell` spend
 * `target_portion_of_balance` (default 1) of the free cash on margin plus fee, after closing an
 * opposite position (one order that reverses it). `price` is the expected fill price.
 */
export const sizeOrder = (
  decision: Decision,
  held: Held | null,
  account: { readonly freeCash: number; readonly feeRate: number; readonly leverage: number; readonly price: number }
): Sizing => {
  if (decision.operation === "hold") return { _tag: "Nothing", reason: "hold" }
  if (decision.operation === "close") {
    return held === null
      ? { _tag: "Nothing", reason: "no position to close" }
      : { _tag: "Order", side: held.side === "long" ? "sell" : "buy", quantity: held.size }
  }
  const side = decision.operation
  const closing = held !== null && held.side !== (side === "buy" ? "long" : "short") ? held : null
  // Cash free once the opposite position is closed at the expected price.
  const freed = closing === null
    ? 0
    : closing.margin + closing.size * (account.price - closing.entry_price) * dir(closing.side) -
      closing.size * account.price * account.feeRate
  const spend = (decision.target_portion_of_balance ?? 1) * (account.freeCash + freed)
  const margin = spend / (1 + account.leverage * account.feeRate)
  const opened = margin > 0 ? (margin * account.leverage) / account.price : 0
  const quantity = (closing?.size ?? 0) + opened
  return quantity > 0
    ? { _tag: "Order", side, quantity }
    : { _tag: "Nothing", reason: "no free cash to trade" }
}

/** What closes a position besides a run: the mark reaching its take profit or its stop loss. */
export type ExitTrigger = "take_profit" | "stop_loss"

/**
 * Whether the mark has reached the position's stop loss (checked first: when both are crossed in
 * one step, the loss is the safer assumption) or take profit: for a long, a mark at or below the
 * stop or at or above the target; for a short, the other way round.
 */
export const exitTriggered = (
  position: {
    readonly side: "long" | "short"
    readonly take_profit_price: number | null
    readonly stop_loss_price: number | null
  },
  mark: number
): ExitTrigger | null => {
  const d = dir(position.side)
  if (position.stop_loss_price !== null && d * (mark - position.stop_loss_price) <= 0) return "stop_loss"
  if (position.take_profit_price !== null && d * (mark - position.take_profit_price) >= 0) return "take_profit"
  return null
}
