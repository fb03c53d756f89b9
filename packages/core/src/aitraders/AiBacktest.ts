import { Schema } from "effect"
import { AccountId, MarginMode } from "../accounts/Account.js"
import { Symbols } from "../automation/Automation.js"
import {
  backtestDefaults,
  BacktestFillSchema,
  BacktestMetricsSchema,
  BacktestOutcome,
  BacktestTradeSchema,
  EquityPointSchema,
  maxBacktestSymbols,
  SymbolMetricsSchema
} from "../backtests/Backtest.js"
import { PositiveAmount } from "../http/Amount.js"
import { defaulted } from "../http/Defaults.js"
import { idParam, StoredId } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { Timeframe } from "../venues/Venue.js"
import { ModelDecision } from "./AiTrader.js"

/** An AI backtest's id. */
export const AiBacktestId = StoredId.pipe(Schema.brand("AiBacktestId"))
export type AiBacktestId = typeof AiBacktestId.Type

/** `/api/account/{account_id}/backtests/{backtest_id}`. */
export const AiBacktestPath = Schema.Struct({ account_id: idParam(AccountId), backtest_id: idParam(AiBacktestId) })

/**
 * `model`: the model is asked for the prompts it has not answered before (cached answers are
 * free); `replay`: no model at all, only cached answers (a prompt not in the cache holds).
 */
export const AiBacktestMode = Schema.Literal("model", "replay")
export type AiBacktestMode = typeof AiBacktestMode.Type

/** The most decision slots one AI backtest has. */
export const maxAiBacktestSlots = 5_000

/** The most model calls one AI backtest may make. */
export const maxModelCallsCap = 5_000

/** What an AI backtest request leaves out (besides what the account's AI trader settings give). */
export const aiBacktestDefaults = { max_model_calls: 100, mode: "model" } as const

const Fraction = Schema.Number.pipe(Schema.finite(), Schema.between(0, 0.1))

/**
 * `POST /api/account/{id}/backtest`: the AI account over `[start, end)`. `symbols`, `timeframe`
 * and `interval_minutes` default to the account's AI trader settings, `leverage` to the account's
 * default leverage (else 1).
 */
export const AiBacktestRequest = Schema.Struct({
  start: Instant,
  end: Instant,
  symbols: Schema.optional(
    Symbols.pipe(
      Schema.maxItems(maxBacktestSymbols),
      Schema.filter((list) => new Set(list).size === list.length || "must not repeat a symbol")
    )
  ),
  timeframe: Schema.optional(Timeframe),
  interval_minutes: Schema.optional(Schema.Int.pipe(Schema.between(1, 10_080))),
  initial_balance: defaulted(PositiveAmount, backtestDefaults.initial_balance),
  fee_rate: defaulted(Fraction, backtestDefaults.fee_rate),
  slippage: defaulted(Fraction, backtestDefaults.slippage),
  margin_mode: defaulted(MarginMode, backtestDefaults.margin_mode),
  leverage: Schema.optional(Schema.Number.pipe(Schema.between(1, 125))),
  max_model_calls: defaulted(Schema.Int.pipe(Schema.between(0, maxModelCallsCap)), aiBacktestDefaults.max_model_calls),
  mode: defaulted(AiBacktestMode, aiBacktestDefaults.mode)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ start: "2025-01-01T00:00:00Z", end: "2025-01-08T00:00:00Z", max_model_calls: 50 }]
})
export type AiBacktestRequest = typeof AiBacktestRequest.Type

/**
 * Where a slot's answer came from: `model` (asked now), `cache` (the same call was answered
 * before), `live` (a replay: the account's scheduled live round at that slot, as it answered), `none`
 * (no answer: the model failed, or a replay found neither).
 */
export const SlotAnswer = Schema.Literal("model", "cache", "live", "none")

/** One decision slot of an AI backtest: when, what the model decided and why, and where the answer came from. */
export const AiBacktestSlot = Schema.Struct({
  /** The close of the bar decided on (epoch ms): the prompt holds history up to it only. */
  time: Schema.Number,
  answer: SlotAnswer,
  /** The call's content address (SHA-256 of model, messages and parameters); null when the call failed. */
  key: Schema.NullOr(Schema.String),
  /** The decoded decisions; null when there were none (see `error`). */
  decisions: Schema.NullOr(Schema.Array(ModelDecision)),
  /** Why the slot held: the model failed, its answer did not decode, or a replay found no cached answer. */
  error: Schema.NullOr(Schema.String),
  /** Tokens of the answer (spent only when `answer` is `model`). */
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int
})
export type AiBacktestSlot = typeof AiBacktestSlot.Type

/** What a completed AI backtest stores: a program backtest's outcome, and its model's side. */
export const AiBacktestOutcome = Schema.Struct({
  ...BacktestOutcome.fields,
  /** The model that decided (`builtin` for the built-in one). */
  model: Schema.String,
  /** Why the run ended before `end` (the model-call budget), or null. */
  stop_reason: Schema.NullOr(Schema.String),
  /** Calls the model was asked (the budget counts these). */
  model_calls: Schema.Int,
  /** Slots answered from the cache or (a replay) by a live round, with no call. */
  cached_calls: Schema.Int,
  /** Tokens and cost of the calls made (cached ones spent nothing). */
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  cost: Schema.Number,
  slots: Schema.Array(AiBacktestSlot)
})
export type AiBacktestOutcome = typeof AiBacktestOutcome.Type

const entryFields = {
  id: AiBacktestId,
  account_id: AccountId,
  status: JobStatus,
  mode: AiBacktestMode,
  symbols: Schema.Array(Schema.String),
  timeframe: Timeframe,
  interval_minutes: Schema.Int,
  start: Schema.String,
  end: Schema.String,
  initial_balance: Schema.Number,
  fee_rate: Schema.Number,
  slippage: Schema.Number,
  margin_mode: MarginMode,
  leverage: Schema.Number,
  max_model_calls: Schema.Int,
  progress: Schema.Number,
  attempts: Schema.Int,
  /** Why the job failed, or why the last attempt ended (a new one starts over, its calls cached). */
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}

/** An AI backtest as its account's list shows it: the request and where the job is, without the result. */
export class AiBacktestEntry extends Schema.Class<AiBacktestEntry>("AiBacktestEntry")(entryFields) {}

/** `GET /api/account/{id}/backtests`: the account's AI backtests, newest first. */
export class AiBacktestList extends Schema.Class<AiBacktestList>("AiBacktestList")({
  backtests: Schema.Array(AiBacktestEntry)
}) {}

/** One AI backtest: its request, where the job is and, once completed, its result. */
export class AiBacktest extends Schema.Class<AiBacktest>("AiBacktest")({
  ...entryFields,
  model: Schema.NullOr(Schema.String),
  stop_reason: Schema.NullOr(Schema.String),
  model_calls: Schema.NullOr(Schema.Int),
  cached_calls: Schema.NullOr(Schema.Int),
  prompt_tokens: Schema.NullOr(Schema.Int),
  completion_tokens: Schema.NullOr(Schema.Int),
  cost: Schema.NullOr(Schema.Number),
  metrics: Schema.NullOr(BacktestMetricsSchema),
  per_symbol: Schema.Array(SymbolMetricsSchema),
  final_balance: Schema.NullOr(Schema.Number),
  equity_curve: Schema.Array(EquityPointSchema),
  trades: Schema.Array(BacktestTradeSchema),
  fills: Schema.Array(BacktestFillSchema),
  /** Each decision slot, oldest first. */
  slots: Schema.Array(AiBacktestSlot)
}) {}
