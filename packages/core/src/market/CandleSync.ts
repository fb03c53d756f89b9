import { Schema } from "effect"
import { idParam, StoredId } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { MarketSymbol } from "./Market.js"

export const CandleSyncId = StoredId.pipe(Schema.brand("CandleSyncId"))
export type CandleSyncId = typeof CandleSyncId.Type

/** `POST /api/market/candles/sync`: fetch a venue's bars of `[from, to)` into the candle store. */
export const CandleSyncRequest = Schema.Struct({
  exchange: Exchange,
  symbol: MarketSymbol,
  timeframe: Timeframe,
  from: Instant,
  to: Instant
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{
    exchange: "venue2",
    symbol: "BTC",
    timeframe: "1m",
    from: "2025-01-01T00:00:00Z",
    to: "2025-02-01T00:00:00Z"
  }]
})
export type CandleSyncRequest = typeof CandleSyncRequest.Type

export const CandleSyncResult = Schema.Struct({
  /** Bars the store holds in the range once the sync ended (a span the venue had no bars for has none). */
  bars: Schema.Int,
  /** Times the venue asked to wait (429 or 503 with `Retry-After`), waited out. */
  waits: Schema.Int
})
export type CandleSyncResult = typeof CandleSyncResult.Type

export class CandleSync extends Schema.Class<CandleSync>("CandleSync")({
  id: CandleSyncId,
  exchange: Exchange,
  symbol: Schema.String,
  timeframe: Timeframe,
  from: Schema.String,
  to: Schema.String,
  status: JobStatus,
  /** 0..1: the part of the range done. */
  progress: Schema.Number,
  result: Schema.NullOr(CandleSyncResult),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String
}) {}

export const CandleSyncPath = Schema.Struct({ id: idParam(CandleSyncId) })
