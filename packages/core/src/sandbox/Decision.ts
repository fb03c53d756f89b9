import { Schema } from "effect"

/** The open position as a program sees it (`data.position`); null when flat. */
export interface PositionView {
  readonly side: "long" | "short"
  readonly size: number
  readonly entry_price: number
  readonly leverage: number
}

/** What the engine tells a program about the account before each decision. */
export interface AccountView {
  readonly position: PositionView | null
  readonly balance: number
  readonly equity: number
}

const Price = Schema.Number.pipe(Schema.finite(), Schema.positive())

// Programs often spell "not set" as null; it reads as absent.
const optional = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

/** What `decide(data)` must return; anything else fails the run with `invalid_decision`. */
export const Decision = Schema.Struct({
  /** `market` (default) fills at once; `limit` and `stop` rest until the price reaches `entry_price`. */
  order_type: optional(Schema.Literal("market", "limit", "stop")),
  entry_price: optional(Price),
  /** `gtc` (default): a resting entry waits until it fills or the next decision; `ioc`: it fills when placed or never. */
  time_in_force: optional(Schema.Literal("gtc", "ioc")),
  operation: Schema.Literal("buy", "sell", "hold", "close"),
  symbol: optional(Schema.String.pipe(Schema.maxLength(40))),
  target_portion_of_balance: optional(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))),
  /** The share of the position a `close`, or a `reduce_only` order, closes (default all of it). */
  target_portion_of_position: optional(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))),
  /** The order may only reduce an opposite position, never open or add. */
  reduce_only: optional(Schema.Boolean),
  leverage: optional(Schema.Number.pipe(Schema.between(1, 125))),
  take_profit_price: optional(Price),
  stop_loss_price: optional(Price),
  /** A stop that follows the best price since entry at this distance (a fraction: 0.02 trails 2 % behind). */
  trailing_stop: optional(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThan(1))),
  reason: optional(Schema.String.pipe(Schema.maxLength(1000)))
}).pipe(
  Schema.filter((d) =>
    d.order_type === "limit" || d.order_type === "stop"
      ? d.operation !== "buy" && d.operation !== "sell"
        ? `a ${d.order_type} order must be a buy or a sell`
        : d.entry_price === undefined
        ? `a ${d.order_type} order needs an entry_price`
        : undefined
      : undefined
  )
)
export type Decision = typeof Decision.Type

/** The decision that does nothing. */
export const hold: Decision = { operation: "hold" }

/** Why a program run stopped: the program threw, ran out of CPU or memory, or returned garbage. */
export class ProgramRunError extends Schema.TaggedError<ProgramRunError>()("ProgramRunError", {
  reason: Schema.Literal("threw", "cpu_budget_exceeded", "memory_exceeded", "invalid_decision"),
  message: Schema.String,
  /** The bar's time when it happened. */
  time: Schema.optional(Schema.Number)
}) {}
