import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { PositiveAmount } from "../http/Amount.js"
import { Instant } from "../http/Instant.js"

/**
 * What the firewall lets through: `active` every order within the limits; `reduce_only` only
 * orders that shrink a position; `paused` none (until `resume_at`, when given); `flatten` none,
 * while every position is closed, then `paused`. Exits (take profit, stop loss, liquidation,
 * flatten) always pass.
 */
export const RiskMode = Schema.Literal("active", "reduce_only", "paused", "flatten")
export type RiskMode = typeof RiskMode.Type

/** Who moved the mode: one of the account's limits (or its resume time), or its owner. */
export const RiskSource = Schema.Literal("rule", "manual")
export type RiskSource = typeof RiskSource.Type

/** The limits a rule can breach, as `RiskBlocked.rule` names them (`mode` for a refusal by the mode). */
export const RiskRule = Schema.Literal(
  "max_position_notional",
  "max_total_notional",
  "max_leverage",
  "max_orders_per_minute",
  "max_daily_loss",
  "max_drawdown_percent",
  "mode"
)
export type RiskRule = typeof RiskRule.Type

/** An account's limits; null is no limit. Notional and loss in the account's currency (USD). */
export const RiskLimits = Schema.Struct({
  /** Largest notional (size × mark) of one symbol's position after an order. */
  max_position_notional: Schema.NullOr(Schema.Number),
  /** Largest notional of all positions together after an order. */
  max_total_notional: Schema.NullOr(Schema.Number),
  /** Largest leverage of an order. */
  max_leverage: Schema.NullOr(Schema.Int),
  /** Most orders (not counting exits and refused ones) in any 60 s. */
  max_orders_per_minute: Schema.NullOr(Schema.Int),
  /** Largest loss of equity since the start of the UTC day. */
  max_daily_loss: Schema.NullOr(Schema.Number),
  /** Largest fall of equity from its peak, in percent of the peak: the kill switch. */
  max_drawdown_percent: Schema.NullOr(Schema.Number)
})
export type RiskLimits = typeof RiskLimits.Type

/** Limits that apply to nothing. */
export const noLimits: RiskLimits = {
  max_position_notional: null,
  max_total_notional: null,
  max_leverage: null,
  max_orders_per_minute: null,
  max_daily_loss: null,
  max_drawdown_percent: null
}

const Count = Schema.Int.pipe(Schema.between(1, 1_000_000, { message: () => "must be a whole number from 1" }))
const Percent = Schema.Number.pipe(
  Schema.finite(),
  Schema.greaterThan(0, { message: () => "must be a percentage above 0 and at most 100" }),
  Schema.lessThanOrEqualTo(100, { message: () => "must be a percentage above 0 and at most 100" })
)

/** `PUT /api/account/{id}/risk`'s limits: an absent limit is kept, null removes it. */
export const RiskLimitsUpdate = Schema.Struct({
  max_position_notional: Schema.optional(Schema.NullOr(PositiveAmount)),
  max_total_notional: Schema.optional(Schema.NullOr(PositiveAmount)),
  max_leverage: Schema.optional(Schema.NullOr(Count)),
  max_orders_per_minute: Schema.optional(Schema.NullOr(Count)),
  max_daily_loss: Schema.optional(Schema.NullOr(PositiveAmount)),
  max_drawdown_percent: Schema.optional(Schema.NullOr(Percent))
})
export type RiskLimitsUpdate = typeof RiskLimitsUpdate.Type

/**
 * `PUT /api/account/{id}/risk`: limits and/or the mode, set by hand. `resume_at` goes with
 * `paused` (null: until set otherwise); setting `active` by hand restarts the drawdown and the
 * day's loss from the equity now.
 */
export const AccountRiskUpdate = Schema.Struct({
  mode: Schema.optional(RiskMode),
  resume_at: Schema.optional(Schema.NullOr(Instant)),
  limits: Schema.optional(RiskLimitsUpdate)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ limits: { max_drawdown_percent: 20, max_orders_per_minute: 10 } }, { mode: "active" }]
})
export type AccountRiskUpdate = typeof AccountRiskUpdate.Type

/** `GET /api/account/{id}/risk`: the mode, the limits and the equity they are measured on. */
export class AccountRisk extends Schema.Class<AccountRisk>("AccountRisk")({
  account_id: AccountId,
  mode: RiskMode,
  /** When a `paused` account becomes `active` again; null for none. */
  resume_at: Schema.NullOr(Schema.String),
  /** Why the mode is what it is (the rule breached, or "set by hand"); null when never moved. */
  reason: Schema.NullOr(Schema.String),
  limits: RiskLimits,
  /** The highest equity seen, which the drawdown is measured from. */
  peak_equity: Schema.Number,
  /** Cash + margins + unrealised PnL at the venue's price, now. */
  equity: Schema.Number,
  /** Equity now less the equity at the start of the UTC day. */
  daily_pnl: Schema.Number,
  updated_at: Schema.String
}) {}

/** One change of an account's mode. */
export class RiskEvent extends Schema.Class<RiskEvent>("RiskEvent")({
  id: Schema.Int,
  account_id: AccountId,
  from_mode: RiskMode,
  to_mode: RiskMode,
  reason: Schema.NullOr(Schema.String),
  source: RiskSource,
  created_at: Schema.String
}) {}

export class RiskEventList extends Schema.Class<RiskEventList>("RiskEventList")({ events: Schema.Array(RiskEvent) }) {}
