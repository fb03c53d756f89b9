import { Schema } from "effect"
import { Amount } from "../http/Amount.js"
import { defaulted } from "../http/Defaults.js"
import { StoredId } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { TrimmedText } from "../http/TrimmedText.js"
import { UserId } from "../users/User.js"
import { Exchange, Timeframe } from "../venues/Venue.js"

/** A signal's id. */
export const SignalId = StoredId.pipe(Schema.brand("SignalId"))
export type SignalId = typeof SignalId.Type

/** A signal pool's id. */
export const PoolId = StoredId.pipe(Schema.brand("PoolId"))
export type PoolId = typeof PoolId.Type

/** A trigger log row's id. */
export const TriggerId = StoredId.pipe(Schema.brand("TriggerId"))
export type TriggerId = typeof TriggerId.Type

/** The ten metrics a signal can watch; `docs/signals.md` defines each with its unit. */
export const Metric = Schema.Literal(
  "price_change",
  "volatility",
  "volume",
  "oi",
  "oi_delta",
  "funding",
  "cvd",
  "taker_ratio",
  "depth_ratio",
  "order_imbalance"
)
export type Metric = typeof Metric.Type

export const Operator = Schema.Literal("gt", "gte", "lt", "lte", "eq", "neq", "abs_gt", "abs_lt")
export type Operator = typeof Operator.Type

/** When a signal is met: `metric` over the last `time_window`, compared by `operator` with `threshold`. */
export const TriggerCondition = Schema.Struct({
  metric: Metric,
  operator: Operator,
  threshold: Amount,
  time_window: Timeframe
})
export type TriggerCondition = typeof TriggerCondition.Type

const name = TrimmedText(200)
const description = Schema.String.pipe(Schema.maxLength(5000))

/** What a signal request leaves out; the service fills it in. */
export const signalDefaults = { exchange: "venue1", enabled: true } as const

/**
 * `POST /api/signals` and `PUT /api/signals/{id}` (the update replaces the signal). Without
 * `exchange`, a new signal is on venue1 and an updated one stays where it was.
 */
export const SignalRequest = Schema.Struct({
  signal_name: name,
  exchange: Schema.optional(Exchange),
  trigger_condition: TriggerCondition,
  description: Schema.optional(Schema.NullOr(description)),
  enabled: defaulted(Schema.Boolean, signalDefaults.enabled)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{
    signal_name: "BTC jumps",
    trigger_condition: { metric: "price_change", operator: "gt", threshold: 2, time_window: "1h" }
  }]
})
export type SignalRequest = typeof SignalRequest.Type

/** The spec's Signal. */
export class Signal extends Schema.Class<Signal>("Signal")({
  id: SignalId,
  exchange: Exchange,
  signal_name: Schema.String,
  trigger_condition: TriggerCondition,
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export const PoolLogic = Schema.Literal("AND", "OR")
export type PoolLogic = typeof PoolLogic.Type

export const SourceType = Schema.Literal("market_signals", "wallet_tracking")
export type SourceType = typeof SourceType.Type

/** A venue1 wallet address: `0x` and 40 hex digits. */
export const WalletAddress = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-fA-F]{40}$/, { message: () => "must be 0x followed by 40 hex digits" })
)

/** Wallets one `wallet_tracking` pool may watch. */
export const maxTrackedAddresses = 50

/**
 * A pool's `source_config`: the addresses of a `wallet_tracking` pool and, optionally, the
 * relative size change (0.1 = 10 %) that counts as a `size_changed` event. Empty for
 * `market_signals` pools.
 */
export const SourceConfig = Schema.Struct({
  addresses: Schema.optional(
    Schema.Array(WalletAddress).pipe(
      Schema.maxItems(maxTrackedAddresses, { message: () => `must hold at most ${maxTrackedAddresses} addresses` })
    )
  ),
  // 100 is a change of 10 000 %: a wallet's size moving more than that is any change at all.
  size_change_threshold: Schema.optional(
    Schema.Number.pipe(
      Schema.finite(),
      Schema.greaterThan(0, { message: () => "must be a number above 0 and at most 100" }),
      Schema.lessThanOrEqualTo(100, { message: () => "must be a number above 0 and at most 100" })
    )
  )
})
export type SourceConfig = typeof SourceConfig.Type

const Symbols = Schema.Array(
  Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9]{1,20}$/, { message: () => "must be a symbol such as BTC" }))
)
  .pipe(Schema.maxItems(100))

const poolFields = {
  pool_name: name,
  exchange: Exchange,
  source_type: SourceType,
  source_config: SourceConfig,
  signal_ids: Schema.Array(SignalId).pipe(Schema.maxItems(50)),
  symbols: Symbols,
  logic: PoolLogic,
  enabled: Schema.Boolean
}

/** What a pool request leaves out; the service fills it in. */
export const poolDefaults = {
  exchange: "venue1" as Exchange,
  source_type: "market_signals" as SourceType,
  source_config: {} as SourceConfig,
  signal_ids: [] as ReadonlyArray<SignalId>,
  symbols: [] as ReadonlyArray<string>,
  logic: "AND" as PoolLogic,
  enabled: true
}

/** `POST /api/signals/pools`. */
export const PoolRequest = Schema.Struct({
  pool_name: poolFields.pool_name,
  exchange: defaulted(Exchange, poolDefaults.exchange),
  source_type: defaulted(SourceType, poolDefaults.source_type),
  source_config: defaulted(SourceConfig, poolDefaults.source_config),
  signal_ids: defaulted(poolFields.signal_ids, poolDefaults.signal_ids),
  symbols: defaulted(poolFields.symbols, poolDefaults.symbols),
  logic: defaulted(PoolLogic, poolDefaults.logic),
  enabled: defaulted(Schema.Boolean, poolDefaults.enabled)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ pool_name: "majors", symbols: ["BTC", "ETH"], logic: "OR" }]
})
export type PoolRequest = typeof PoolRequest.Type

/** The spec's "Pool update body": every field optional; a null leaves the field as it is. */
export const PoolUpdate = Schema.Struct(
  Object.fromEntries(
    Object.entries(poolFields).map(([key, field]) => [key, Schema.optional(Schema.NullOr(field))])
  ) as {
    readonly [K in keyof typeof poolFields]: Schema.optional<Schema.NullOr<(typeof poolFields)[K]>>
  }
).annotations({ parseOptions: { errors: "all" }, examples: [{ pool_name: "majors, renamed" }] })
export type PoolUpdate = typeof PoolUpdate.Type

/** The spec's Signal pool. */
export class SignalPool extends Schema.Class<SignalPool>("SignalPool")({
  id: PoolId,
  ...poolFields,
  pool_name: Schema.String,
  symbols: Schema.Array(Schema.String),
  created_at: Schema.String
}) {}

/** `GET /api/signals`: the caller's pools and signals. */
export class SignalsListing extends Schema.Class<SignalsListing>("SignalsListing")({
  pools: Schema.Array(SignalPool),
  signals: Schema.Array(Signal)
}) {}

/** One signal's part in a firing (or a dry run): its metric's value and whether the condition held. */
export const SignalValue = Schema.Struct({
  signal_id: SignalId,
  signal_name: Schema.String,
  metric: Metric,
  operator: Operator,
  threshold: Schema.Number,
  time_window: Timeframe,
  /** Null when the window is not ready or the metric is undefined over it (then the condition is not met). */
  value: Schema.NullOr(Schema.Number),
  met: Schema.Boolean,
  /** Whether the window was complete (covered by samples, or by candles for the price metrics): a value is computed only then. */
  ready: Schema.Boolean,
  /** Why `value` is null: `not_ready: ...` or `undefined: ...`; null with a value. */
  reason: Schema.NullOr(Schema.String)
})
export type SignalValue = typeof SignalValue.Type

export const WalletEventKind = Schema.Literal("opened", "closed", "flipped", "size_changed", "liquidated")
export type WalletEventKind = typeof WalletEventKind.Type

/** A change of a tracked wallet's position on venue1. Sizes are signed coins (negative is short). */
export const WalletEvent = Schema.Struct({
  address: Schema.String,
  kind: WalletEventKind,
  previous_size: Schema.Number,
  size: Schema.Number,
  price: Schema.Number,
  time: Schema.String
})
export type WalletEvent = typeof WalletEvent.Type

/**
 * One firing of a pool: a `market_signals` pool's edge from not met to met for one symbol (with
 * the values that fired it), or a `wallet_tracking` pool's wallet event. The trigger log's row and
 * the engine's event are this same shape.
 */
export class Trigger extends Schema.Class<Trigger>("Trigger")({
  id: TriggerId,
  pool_id: PoolId,
  user_id: UserId,
  pool_name: Schema.String,
  exchange: Exchange,
  source_type: SourceType,
  symbol: Schema.String,
  fired_at: Schema.String,
  logic: PoolLogic,
  values: Schema.Array(SignalValue),
  wallet_event: Schema.NullOr(WalletEvent)
}) {}

/** `GET /api/signals/triggers`: newest first; `next_offset` is null on the last page. */
export class TriggerList extends Schema.Class<TriggerList>("TriggerList")({
  triggers: Schema.Array(Trigger),
  next_offset: Schema.NullOr(Schema.Int)
}) {}

const positiveIdParam = Schema.NumberFromString.pipe(Schema.int(), Schema.positive())

/** Query of the trigger log. */
export const TriggerQuery = Schema.Struct({
  pool_id: Schema.optional(positiveIdParam.pipe(Schema.compose(PoolId))),
  symbol: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20))),
  since: Schema.optional(Schema.DateTimeUtc),
  ...Pagination.fields
})
export type TriggerQuery = typeof TriggerQuery.Type

/** `POST /api/signals/{id}/evaluate`. */
export const EvaluateRequest = Schema.Struct({
  symbol: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9]{1,20}$/, { message: () => "must be a symbol such as BTC" }))
}).annotations({ examples: [{ symbol: "BTC" }] })

/** A dry run of one signal on one symbol: nothing is written. */
export class Evaluation extends Schema.Class<Evaluation>("Evaluation")({
  ...SignalValue.fields,
  exchange: Exchange,
  symbol: Schema.String,
  /** Samples in the window, counting the fresh one taken for this answer. */
  sample_count: Schema.Int,
  evaluated_at: Schema.String
}) {}

/** How much of one `time_window` the samples of a symbol cover, as of the request. */
export const WindowSamplingStatus = Schema.Struct({
  time_window: Timeframe,
  /** Since when the samples cover the time up to now without a hole longer than three sampling intervals; null when they do not reach now. */
  covered_from: Schema.NullOr(Schema.String),
  /** The fraction of the window (0 to 1) covered since `covered_from`. */
  coverage: Schema.Number,
  /** Whether the samples cover the whole window, so every metric over it is computed from samples. */
  ready: Schema.Boolean
})

/** The sampling of one symbol of a pool, per `time_window` its signals use (shortest first). */
export const SymbolSamplingStatus = Schema.Struct({
  symbol: Schema.String,
  last_sampled_at: Schema.NullOr(Schema.String),
  windows: Schema.Array(WindowSamplingStatus)
})

/** One row of `GET /api/sampling/pool-status`. */
export const PoolSamplingStatus = Schema.Struct({
  pool_id: PoolId,
  pool_name: Schema.String,
  enabled: Schema.Boolean,
  symbol_count: Schema.Int,
  /** The latest sample taken for any of the pool's symbols; null before the first. */
  last_sampled_at: Schema.NullOr(Schema.String),
  /** Failed samples of the pool's symbols, counted since they were first sampled. */
  errors: Schema.Int,
  last_error: Schema.NullOr(Schema.String),
  /** Each symbol of a `market_signals` pool with its windows' coverage; empty for `wallet_tracking`. */
  symbols: Schema.Array(SymbolSamplingStatus)
})

export class SamplingStatus extends Schema.Class<SamplingStatus>("SamplingStatus")({
  pools: Schema.Array(PoolSamplingStatus)
}) {}

/** `GET /api/signals/wallet-tracking/status`: over the caller's `wallet_tracking` pools. */
export class WalletTrackingStatus extends Schema.Class<WalletTrackingStatus>("WalletTrackingStatus")({
  /** Whether any enabled pool tracks wallets. */
  enabled: Schema.Boolean,
  last_sync_at: Schema.NullOr(Schema.String),
  tracked_wallets: Schema.Int,
  errors: Schema.Int
}) {}
