import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { PositiveAmount } from "../http/Amount.js"
import { defaulted } from "../http/Defaults.js"
import { idParam, StoredId } from "../http/IdParam.js"
import { documentTrimmed } from "../http/TrimmedText.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { Decision } from "../sandbox/Decision.js"
import { Exchange, LongerTimeframes, Timeframe } from "../venues/Venue.js"

/** A binding's id. */
export const BindingId = StoredId.pipe(Schema.brand("BindingId"))
export type BindingId = typeof BindingId.Type

export const RunId = StoredId.pipe(Schema.brand("RunId"))
export type RunId = typeof RunId.Type

/** `/programs/:id/bindings/:binding_id` */
export const BindingPath = Schema.Struct({ id: idParam(ProgramId), binding_id: idParam(BindingId) })

const Symbol = documentTrimmed(
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(40),
    Schema.compose(Schema.Uppercase)
  ),
  { max: 40, nonEmpty: true, what: "a symbol (upper-cased)" }
)
export const Symbols = Schema.Array(Symbol).pipe(Schema.minItems(1), Schema.maxItems(50))
/** Every N minutes, at most once a week. */
const IntervalMinutes = Schema.Int.pipe(Schema.between(1, 10_080))
const PoolIds = Schema.Array(StoredId).pipe(Schema.maxItems(50))
// Bounds are the account's rule (422 leverage_too_high), so only the shape is checked here.
const Leverage = Schema.Int
const Params = ProgramParams

const hasTrigger = (
  b: {
    readonly interval_minutes?: number | null | undefined
    readonly signal_pool_ids?: ReadonlyArray<number> | undefined
  }
) => (b.interval_minutes ?? null) !== null || (b.signal_pool_ids ?? []).length > 0

/** What a binding request leaves out; the service fills it in. */
export const bindingDefaults = {
  timeframe: "1h" as Timeframe,
  timeframes: [] as typeof LongerTimeframes.Type,
  signal_pool_ids: [] as typeof PoolIds.Type,
  params: {} as typeof Params.Type,
  enabled: true,
  portfolio: false
}

/** `POST /api/programs/{id}/bindings`: a schedule, signal pools, or both. */
export const BindingRequest = Schema.Struct({
  account_id: AccountId,
  symbols: Symbols,
  timeframe: defaulted(Timeframe, bindingDefaults.timeframe),
  /** Longer timeframes the program reads in `data.timeframes`. */
  timeframes: defaulted(LongerTimeframes, bindingDefaults.timeframes),
  interval_minutes: Schema.optionalWith(IntervalMinutes, { nullable: true }),
  signal_pool_ids: defaulted(PoolIds, bindingDefaults.signal_pool_ids),
  params: defaulted(Params, bindingDefaults.params),
  leverage: Schema.optionalWith(Leverage, { nullable: true }),
  enabled: defaulted(Schema.Boolean, bindingDefaults.enabled),
  /** One run decides for every symbol at once (a program of several symbols), instead of one run per symbol. */
  portfolio: defaulted(Schema.Boolean, bindingDefaults.portfolio)
}).annotations({
  // Here too: the document shows the struct's examples, not those of the filter below.
  examples: [{ account_id: AccountId.make(1), symbols: ["BTC"], interval_minutes: 60 }]
}).pipe(
  Schema.filter((b) =>
    hasTrigger(b) || { path: ["interval_minutes"], message: "give interval_minutes, signal_pool_ids, or both" }
  )
).annotations({
  parseOptions: { errors: "all" },
  examples: [{ account_id: AccountId.make(1), symbols: ["BTC"], interval_minutes: 60 }]
})
export type BindingRequest = typeof BindingRequest.Type

/** `PUT /api/programs/{id}/bindings/{binding_id}`: an absent field is kept; `null` clears `interval_minutes` and `leverage`. */
export const BindingUpdate = Schema.Struct({
  account_id: Schema.optional(AccountId),
  symbols: Schema.optional(Symbols),
  timeframe: Schema.optional(Timeframe),
  timeframes: Schema.optional(LongerTimeframes),
  interval_minutes: Schema.optional(Schema.NullOr(IntervalMinutes)),
  signal_pool_ids: Schema.optional(PoolIds),
  params: Schema.optional(Params),
  leverage: Schema.optional(Schema.NullOr(Leverage)),
  enabled: Schema.optional(Schema.Boolean),
  portfolio: Schema.optional(Schema.Boolean)
}).annotations({ parseOptions: { errors: "all" }, examples: [{ enabled: false }] })
export type BindingUpdate = typeof BindingUpdate.Type

export class Binding extends Schema.Class<Binding>("Binding")({
  id: BindingId,
  program_id: ProgramId,
  account_id: AccountId,
  symbols: Schema.Array(Schema.String),
  timeframe: Timeframe,
  timeframes: Schema.Array(Timeframe),
  interval_minutes: Schema.NullOr(Schema.Int),
  signal_pool_ids: Schema.Array(Schema.Int),
  params: Params,
  leverage: Schema.NullOr(Schema.Int),
  enabled: Schema.Boolean,
  /** Whether one run decides for all `symbols` at once, rather than one run per symbol. */
  portfolio: Schema.Boolean,
  /** When the schedule fires next; null without a schedule or while disabled. */
  next_run_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class BindingList extends Schema.Class<BindingList>("BindingList")({ bindings: Schema.Array(Binding) }) {}

/** What started a run. */
export const RunTrigger = Schema.Literal("schedule", "signal", "manual")
export type RunTrigger = typeof RunTrigger.Type

/** `queued` until a worker claims it, `running`, then `completed` (decided, and its order placed or refused) or `failed`. */
export const RunStatus = Schema.Literal("queued", "running", "completed", "failed")
export type RunStatus = typeof RunStatus.Type

export class Run extends Schema.Class<Run>("Run")({
  id: RunId,
  binding_id: BindingId,
  program_id: ProgramId,
  account_id: AccountId,
  /** The first of `symbols`. */
  symbol: Schema.String,
  /** What the run decides for: its one symbol, or every symbol of a portfolio binding. */
  symbols: Schema.Array(Schema.String),
  trigger: RunTrigger,
  status: RunStatus,
  attempts: Schema.Int,
  /** The program's decision for `symbol` at the last closed bar; null until it has decided. */
  decision: Schema.NullOr(Decision),
  /** Its decision for each of `symbols`, in their order; null until it has decided. */
  decisions: Schema.NullOr(Schema.Array(Decision)),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}) {}

export class RunList extends Schema.Class<RunList>("RunList")({ runs: Schema.Array(Run) }) {}

/** `paper` fills against the venue's price in the platform's own ledger; `venue` is sent to the venue's API. */
export const OrderRoute = Schema.Literal("paper", "venue")

/**
 * What placed an order: a run's decision or a person (`run`, with `run_id` null for a manual
 * order), its position's mark reaching the take profit, the stop loss or (on paper) the
 * liquidation price, or the risk firewall closing every position of the account (`flatten`);
 * `reconciliation` books what the venue did that the ledger missed (see docs/automation.md).
 */
export const OrderTrigger = Schema.Literal(
  "run",
  "take_profit",
  "stop_loss",
  "liquidation",
  "flatten",
  "reconciliation"
)

/**
 * `pending` once decided, `submitted` while the venue has it, then `filled` or `rejected` (a rule
 * of the account, or the venue, refused it; `error` says why).
 */
export const OrderStatus = Schema.Literal("pending", "submitted", "open", "filled", "rejected", "cancelled")
export type OrderStatus = typeof OrderStatus.Type

export class Order extends Schema.Class<Order>("Order")({
  id: Schema.Int,
  run_id: Schema.NullOr(RunId),
  binding_id: Schema.NullOr(BindingId),
  program_id: Schema.NullOr(ProgramId),
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  route: OrderRoute,
  trigger: OrderTrigger,
  /** `market`, or a `limit` or `stop` entry that is `open` until the mark reaches its `entry_price`. */
  order_type: Schema.Literal("market", "limit", "stop"),
  entry_price: Schema.NullOr(Schema.Number),
  time_in_force: Schema.NullOr(Schema.Literal("gtc", "ioc")),
  /** The level an exit was triggered at (its take profit, stop loss or, on paper, liquidation price), which paper fills it at by the rulebook; null for a run's order. */
  trigger_price: Schema.NullOr(Schema.Number),
  side: Schema.Literal("buy", "sell"),
  quantity: Schema.Number,
  leverage: Schema.Int,
  status: OrderStatus,
  venue_order_id: Schema.NullOr(Schema.String),
  /** Average fill price; null until filled. */
  price: Schema.NullOr(Schema.Number),
  fee: Schema.NullOr(Schema.Number),
  /** Profit of the part that reduced a position, before fees; 0 for a pure entry. */
  realized_pnl: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  filled_at: Schema.NullOr(Schema.String)
}) {}

/**
 * A difference the reconciliation found between the ledger and the venue, and how it resolved it
 * (docs/automation.md): an order whose answer was lost, found filled (`fill_booked`), resting
 * (`order_open`), not received (`order_unknown`) or done without executing (`order_closed`); a
 * position the ledger did not know (`position_adopted`), one the venue closed
 * (`position_closed`) or holds at another size (`position_resized`); a balance that differs from
 * the ledger's (`balance_differs`, reported, never booked) or matches again (`balance_matches`);
 * a take profit or stop loss the venue no longer holds, placed again (`protection_replaced`); an
 * order whose answer was lost that cannot be looked up, as the account has no credentials for its
 * venue any more (`credentials_missing`: it stays submitted until they return).
 */
export const ReconciliationKind = Schema.Literal(
  "fill_booked",
  "order_open",
  "order_unknown",
  "order_closed",
  "position_adopted",
  "position_closed",
  "position_resized",
  "balance_differs",
  "balance_matches",
  "protection_replaced",
  "credentials_missing"
)
export type ReconciliationKind = typeof ReconciliationKind.Type

export class ReconciliationEvent extends Schema.Class<ReconciliationEvent>("ReconciliationEvent")({
  id: Schema.Int,
  account_id: AccountId,
  exchange: Exchange,
  kind: ReconciliationKind,
  symbol: Schema.NullOr(Schema.String),
  /** The ledger's order it concerns (the one looked up, or the booking), if any. */
  order_id: Schema.NullOr(Schema.Int),
  /** Signed size (negative short) in the ledger and at the venue, or the balances for a balance event. */
  ledger_size: Schema.NullOr(Schema.Number),
  venue_size: Schema.NullOr(Schema.Number),
  message: Schema.String,
  created_at: Schema.String
}) {}

export class ReconciliationList
  extends Schema.Class<ReconciliationList>("ReconciliationList")({ reconciliations: Schema.Array(ReconciliationEvent) })
{}

export class OrderList extends Schema.Class<OrderList>("OrderList")({ orders: Schema.Array(Order) }) {}

export class AccountPosition extends Schema.Class<AccountPosition>("AccountPosition")({
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  side: Schema.Literal("long", "short"),
  size: Schema.Number,
  entry_price: Schema.Number,
  leverage: Schema.Int,
  /** Cash frozen for the position (`frozen_cash` is the sum over the account's positions). */
  margin: Schema.Number,
  /** Closes the position when the mark reaches it (from the decision that opened it); null for none. */
  take_profit_price: Schema.NullOr(Schema.Number),
  stop_loss_price: Schema.NullOr(Schema.Number),
  /** A stop that follows the best mark since the position opened at this distance (a fraction); null for none. */
  trailing_stop: Schema.NullOr(Schema.Number),
  /** The best mark the trailing stop has seen (the highest for a long, the lowest for a short). */
  trail_best: Schema.NullOr(Schema.Number),
  /** The take profit and stop loss rest at the venue as its own conditional orders, so they hold while the platform is down. */
  protected_at_venue: Schema.Boolean,
  /** The reconciliation found the position at the venue without the ledger knowing it, and took it over. */
  adopted: Schema.Boolean,
  opened_at: Schema.String,
  updated_at: Schema.String
}) {}

/** A funding payment of a paper position: `amount` is what the account received (negative when it paid). */
export class FundingPayment extends Schema.Class<FundingPayment>("FundingPayment")({
  symbol: Schema.String,
  time: Schema.String,
  side: Schema.Literal("long", "short"),
  size: Schema.Number,
  mark_price: Schema.Number,
  rate: Schema.Number,
  amount: Schema.Number
}) {}

export class FundingList extends Schema.Class<FundingList>("FundingList")({ funding: Schema.Array(FundingPayment) }) {}

export class PositionList
  extends Schema.Class<PositionList>("PositionList")({ positions: Schema.Array(AccountPosition) })
{}

/** A client's key for an order it places by hand: the same key is the same order, however often it is sent. */
export const ClientOrderId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.:-]{1,64}$/, { message: () => "must be 1 to 64 letters, digits or _.:-" })
)

/**
 * `POST /api/account/{id}/orders`: a market order placed by hand, filled as a program's is (paper or
 * venue, the rulebook, the risk firewall). `reduce_only` only shrinks an opposite position (its
 * quantity is cut to the position's size). `leverage` defaults to the account's default, else 1.
 */
export const ManualOrderRequest = Schema.Struct({
  symbol: Symbol,
  side: Schema.Literal("buy", "sell"),
  quantity: PositiveAmount,
  leverage: Schema.optionalWith(Leverage, { nullable: true }),
  reduce_only: defaulted(Schema.Boolean, false),
  /** Also accepted as the `Idempotency-Key` header; a request sent again with it answers the order it placed. */
  client_order_id: Schema.optionalWith(ClientOrderId, { nullable: true })
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ symbol: "BTC", side: "buy", quantity: 0.01, leverage: 2 }]
})
export type ManualOrderRequest = typeof ManualOrderRequest.Type
