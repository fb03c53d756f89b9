import { Schema } from "effect"
import { DecisionRound } from "../aitraders/AiTrader.js"
import { ReconciliationEvent } from "../automation/Automation.js"
import { BacktestId, BacktestMetricsSchema, BacktestStatus } from "../backtests/Backtest.js"
import { MarketSymbol, maxSymbols, PriceSnapshot } from "../market/Market.js"
import { NewsItem } from "../news/NewsSource.js"
import { RiskEvent } from "../risk/Risk.js"
import { Trigger } from "../signals/Signal.js"
import { Exchange } from "../venues/Venue.js"

/** `GET /api/market-intelligence/stream?symbols=BTC,ETH&exchange=venue1`. */
export const MarketStreamParams = Schema.Struct({
  symbols: Schema.split(",").pipe(
    Schema.compose(
      Schema.Array(MarketSymbol).pipe(
        Schema.minItems(1),
        Schema.maxItems(maxSymbols, { message: () => `must list at most ${maxSymbols} symbols` })
      )
    )
  ),
  exchange: Schema.optional(Exchange)
})
export type MarketStreamParams = typeof MarketStreamParams.Type

/** Taker flow and open interest of one symbol over the last hour. */
export const FlowSummary = Schema.Struct({
  /** Quote (USD) volume of the trades in the window whose taker bought. */
  taker_buy_volume: Schema.Number,
  /** Quote (USD) volume of the trades in the window whose taker sold. */
  taker_sell_volume: Schema.Number,
  /** Open interest now, in coins. */
  open_interest: Schema.Number,
  /** Change of open interest (coins) since the oldest sample in the window; null without samples. */
  open_interest_change: Schema.NullOr(Schema.Number),
  /** Start of the window the figures cover (ISO-8601). */
  since: Schema.String
})
export type FlowSummary = typeof FlowSummary.Type

/** The first event of a stream: where things stand now. */
export const MarketSnapshot = Schema.Struct({
  exchange: Exchange,
  timestamp: Schema.String,
  prices: Schema.Record({ key: Schema.String, value: PriceSnapshot }),
  flow: Schema.Record({ key: Schema.String, value: FlowSummary }),
  /** The caller's most recent triggers, newest first. */
  triggers: Schema.Array(Trigger)
})
export type MarketSnapshot = typeof MarketSnapshot.Type

/** A symbol's price moved. */
export const PriceUpdate = Schema.Struct({
  kind: Schema.Literal("price"),
  exchange: Exchange,
  symbol: Schema.String,
  price: Schema.Number,
  change_24h: Schema.Number,
  volume_24h: Schema.Number,
  funding_rate: Schema.Number,
  timestamp: Schema.String
})
export type PriceUpdate = typeof PriceUpdate.Type

/** One of the caller's signal pools fired. */
export const TriggerUpdate = Schema.Struct({
  kind: Schema.Literal("trigger"),
  trigger: Trigger
})
export type TriggerUpdate = typeof TriggerUpdate.Type

/** The risk mode of one of the caller's accounts changed (as `GET /api/account/{id}/risk/events` lists it). */
export const RiskUpdate = Schema.Struct({
  kind: Schema.Literal("risk"),
  event: RiskEvent
})
export type RiskUpdate = typeof RiskUpdate.Type

/** The reconciliation found a difference between one of the caller's accounts and its venue (as `GET /api/account/{id}/reconciliations` lists it). */
export const ReconciliationUpdate = Schema.Struct({
  kind: Schema.Literal("reconciliation"),
  event: ReconciliationEvent
})
export type ReconciliationUpdate = typeof ReconciliationUpdate.Type

/** One of the caller's AI accounts finished a decision round (as `GET /api/account/{id}/decisions` lists it). */
export const DecisionUpdate = Schema.Struct({
  kind: Schema.Literal("decision"),
  round: DecisionRound
})
export type DecisionUpdate = typeof DecisionUpdate.Type

export const MarketUpdate = Schema.Union(PriceUpdate, TriggerUpdate, RiskUpdate, ReconciliationUpdate, DecisionUpdate)
export type MarketUpdate = typeof MarketUpdate.Type

export const Heartbeat = Schema.Struct({ timestamp: Schema.String })

/** The data of a `news` event: a story about a watched symbol from one of the caller's enabled sources, as `GET /api/news` lists it. */
export const NewsUpdate = NewsItem
export type NewsUpdate = typeof NewsUpdate.Type

/**
 * One event of the market-intelligence stream as the client sees it: the SSE `event` name, its
 * `id` (send it back as `Last-Event-ID` to resume) and its JSON `data`.
 */
export const MarketEvent = Schema.Union(
  Schema.Struct({ event: Schema.Literal("snapshot"), id: Schema.String, data: MarketSnapshot }),
  Schema.Struct({ event: Schema.Literal("update"), id: Schema.String, data: MarketUpdate }),
  Schema.Struct({ event: Schema.Literal("news"), id: Schema.String, data: NewsUpdate }),
  Schema.Struct({ event: Schema.Literal("heartbeat"), id: Schema.String, data: Heartbeat })
)
export type MarketEvent = typeof MarketEvent.Type

/** What a WebSocket client sends. */
export const WsClientMessage = Schema.Union(
  Schema.Struct({ type: Schema.Literal("subscribe", "unsubscribe"), channel: Schema.String }),
  Schema.Struct({ type: Schema.Literal("ping") }),
  Schema.Struct({ type: Schema.Literal("auth"), token: Schema.String })
)
export type WsClientMessage = typeof WsClientMessage.Type

/** What the server sends on a WebSocket; every message names its channel (`null` for ping and errors). */
export const WsServerMessage = Schema.Union(
  Schema.Struct({ type: Schema.Literal("subscribed", "unsubscribed"), channel: Schema.String }),
  Schema.Struct({ type: Schema.Literal("event"), channel: Schema.String, data: Schema.Unknown }),
  Schema.Struct({ type: Schema.Literal("pong"), channel: Schema.Null }),
  Schema.Struct({
    type: Schema.Literal("error"),
    channel: Schema.NullOr(Schema.String),
    code: Schema.String,
    error: Schema.String
  })
)
export type WsServerMessage = typeof WsServerMessage.Type

/** The data of a `backtest:{id}` WebSocket event: the job's progress, then its final status. */
export const BacktestProgress = Schema.Struct({
  id: BacktestId,
  status: BacktestStatus,
  progress: Schema.Number,
  error: Schema.NullOr(Schema.String),
  metrics: Schema.NullOr(BacktestMetricsSchema)
})
export type BacktestProgress = typeof BacktestProgress.Type
