import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { Symbols } from "../automation/Automation.js"
import { StoredId } from "../http/IdParam.js"
import { Decision } from "../sandbox/Decision.js"
import { Timeframe } from "../venues/Venue.js"

/** The model name that means the built-in, deterministic model (also what an AI account with no `model` uses). */
export const builtinModel = "builtin"

// A prompt of the account's own (null: the default); its `{variables}` are checked when saved.
const Template = Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000)))
const IntervalMinutes = Schema.Int.pipe(Schema.between(1, 10_080))
const Limit = Schema.NullOr(Schema.Int.pipe(Schema.between(0, 1_000_000_000)))

/** An AI account's trading settings: what it trades, how often it decides, and what it may spend. */
export class AiTraderSettings extends Schema.Class<AiTraderSettings>("AiTraderSettings")({
  account_id: AccountId,
  /** Whether the account decides on its schedule. */
  enabled: Schema.Boolean,
  symbols: Schema.Array(Schema.String),
  /** The candles its model is shown. */
  timeframe: Timeframe,
  /** A decision round every N minutes while enabled. */
  interval_minutes: Schema.Int,
  /** Signal pools of the owner's whose triggers, for one of `symbols`, also start a round while enabled. */
  signal_pool_ids: Schema.Array(Schema.Int),
  /** The account's own system prompt; null: the default (`GET /api/ai/prompt-variables` shows it). */
  system_prompt: Schema.NullOr(Schema.String),
  /** The account's own user message, with `{variables}`; null: the default, `Context: {context}`. */
  user_template: Schema.NullOr(Schema.String),
  /** Rounds per hour at most; null: the server's default (`AI_TRADER_ROUNDS_PER_HOUR`). */
  max_rounds_per_hour: Schema.NullOr(Schema.Int),
  /** Model tokens per day at most; null: the server's default (`AI_TRADER_TOKENS_PER_DAY`). */
  max_tokens_per_day: Schema.NullOr(Schema.Int),
  /** The model that decides: the account's `model`, or `builtin` when it has none. */
  model: Schema.String,
  next_run_at: Schema.NullOr(Schema.String),
  created_at: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String)
}) {}

/** What `PUT /api/account/{id}/ai-trader` takes; what it leaves out keeps its value (or the default). */
export const AiTraderUpdate = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  symbols: Schema.optional(Symbols),
  timeframe: Schema.optional(Timeframe),
  interval_minutes: Schema.optional(IntervalMinutes),
  signal_pool_ids: Schema.optional(Schema.Array(StoredId).pipe(Schema.maxItems(50))),
  system_prompt: Schema.optional(Template),
  user_template: Schema.optional(Template),
  max_rounds_per_hour: Schema.optional(Limit),
  max_tokens_per_day: Schema.optional(Limit)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ enabled: true, symbols: ["BTC", "ETH"], timeframe: "1h", interval_minutes: 60 }]
})
export type AiTraderUpdate = typeof AiTraderUpdate.Type

/** What a new AI trader starts with. */
export const aiTraderDefaults = {
  enabled: false,
  symbols: ["BTC"],
  timeframe: "1h" as Timeframe,
  interval_minutes: 60,
  signal_pool_ids: [] as ReadonlyArray<number>
}

export const RoundTrigger = Schema.Literal("schedule", "signal", "manual")
export type RoundTrigger = typeof RoundTrigger.Type

export const RoundStatus = Schema.Literal("queued", "running", "completed", "failed")

/**
 * How a finished round ended: `traded` (its decisions were placed; some may be holds or refused),
 * `no_trade` (the model failed or its answer did not decode; why is in `error`), `skipped` (over a
 * limit; why is in `error`).
 */
export const RoundOutcome = Schema.Literal("traded", "no_trade", "skipped")
export type RoundOutcome = typeof RoundOutcome.Type

/** One decision as the model must write it: strict, nothing else allowed. */
const Price = Schema.Number.pipe(Schema.finite(), Schema.positive())
const nullable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })
export const ModelDecision = Schema.Struct({
  operation: Schema.Literal("buy", "sell", "hold", "close"),
  symbol: Schema.String.pipe(Schema.maxLength(40)),
  target_portion_of_balance: nullable(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))),
  leverage: nullable(Schema.Int.pipe(Schema.between(1, 125))),
  /** A limit: the worst price the entry may fill at, now or never (an AI trader's entries do not rest). */
  entry_price: nullable(Price),
  take_profit_price: nullable(Price),
  stop_loss_price: nullable(Price),
  reason: Schema.String.pipe(Schema.maxLength(1000))
})
export type ModelDecision = typeof ModelDecision.Type

/** The whole answer the model must give: JSON `{"decisions": [...]}`, at most one per symbol. */
export const ModelAnswer = Schema.Struct({ decisions: Schema.Array(ModelDecision).pipe(Schema.maxItems(50)) })
export type ModelAnswer = typeof ModelAnswer.Type

/** A model decision as the order path takes it (a program's `Decision`): a limit entry is immediate-or-cancel. */
export const toDecision = (d: ModelDecision): Decision => ({
  operation: d.operation,
  symbol: d.symbol,
  reason: d.reason,
  ...(d.target_portion_of_balance !== undefined ? { target_portion_of_balance: d.target_portion_of_balance } : {}),
  ...(d.leverage !== undefined ? { leverage: d.leverage } : {}),
  ...(d.take_profit_price !== undefined ? { take_profit_price: d.take_profit_price } : {}),
  ...(d.stop_loss_price !== undefined ? { stop_loss_price: d.stop_loss_price } : {}),
  ...(d.entry_price !== undefined && (d.operation === "buy" || d.operation === "sell")
    ? { order_type: "limit" as const, entry_price: d.entry_price, time_in_force: "ioc" as const }
    : {})
})

/** An order a round's decision led to. */
export const RoundOrder = Schema.Struct({
  symbol: Schema.String,
  /** Null when the decision ordered nothing (a hold, nothing to close, a limit not reached). */
  order_id: Schema.NullOr(Schema.Int),
  status: Schema.NullOr(Schema.String),
  /** Why the order was refused (the rulebook, the risk firewall, the venue), if it was. */
  error: Schema.NullOr(Schema.String)
})
export type RoundOrder = typeof RoundOrder.Type

/** One decision round of an AI account: what its model was asked, what it answered, and what followed. */
export class DecisionRound extends Schema.Class<DecisionRound>("DecisionRound")({
  id: Schema.Int,
  account_id: AccountId,
  trigger: RoundTrigger,
  status: RoundStatus,
  outcome: Schema.NullOr(RoundOutcome),
  model: Schema.NullOr(Schema.String),
  /** The messages sent to the model (system, then user), never with a secret in them. */
  prompt: Schema.NullOr(Schema.String),
  raw_answer: Schema.NullOr(Schema.String),
  decisions: Schema.NullOr(Schema.Array(ModelDecision)),
  orders: Schema.Array(RoundOrder),
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  /** In the configured price's currency (`AI_TRADER_PRICES`); 0 for the built-in model. */
  cost: Schema.Number,
  latency_ms: Schema.NullOr(Schema.Int),
  /** Whether the model's answer came from the model-call cache: the very same call was made before, so none was made now. */
  cached: Schema.Boolean,
  /** Why there was no trade, why the round was skipped, or why it failed. */
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}) {}

export class DecisionRoundList extends Schema.Class<DecisionRoundList>("DecisionRoundList")({
  decisions: Schema.Array(DecisionRound)
}) {}
