import { Schema } from "effect"
import { defaulted, defaultedParam } from "../http/Defaults.js"
import { integerParam } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { Candle, Exchange, SymbolSpec, Timeframe } from "../venues/Venue.js"
import { CandleExchange } from "./Dataset.js"

/** A bare coin name such as `BTC`; lower case is accepted. */
// Documented as the wire sees it: any case, upper-cased before the pattern is checked.
export const MarketSymbol = Schema.Uppercase.pipe(
  Schema.pattern(/^[A-Z0-9]{1,20}$/, { message: () => "must be 1 to 20 letters or digits, such as BTC" })
).annotations({
  jsonSchema: {
    type: "string",
    pattern: "^[A-Za-z0-9]{1,20}$",
    description: "A symbol: 1 to 20 letters or digits, such as BTC (read in upper case)"
  }
})

export const Indicator = Schema.Literal("sma", "ema", "rsi")
export type Indicator = typeof Indicator.Type

/** At most this many symbols per request. */
export const maxSymbols = 50

const Symbols = Schema.Array(MarketSymbol).pipe(
  Schema.minItems(1),
  Schema.maxItems(maxSymbols, { message: () => `must list at most ${maxSymbols} symbols` })
)

const allErrors = { parseOptions: { errors: "all" } } as const

/** What a market request leaves out. */
export const marketDefaults = {
  exchange: "venue1",
  timeframe: "1h",
  limit: 100,
  indicators: [] as ReadonlyArray<Indicator>
} as const

export const PricesRequest = Schema.Struct({
  symbols: Symbols,
  exchange: defaulted(Exchange, marketDefaults.exchange)
}).annotations({ ...allErrors, examples: [{ symbols: ["BTC", "ETH"] }] })
export type PricesRequest = typeof PricesRequest.Type

export const MarketDataQuery = Schema.Struct({
  ...PricesRequest.fields,
  timeframe: defaulted(Timeframe, marketDefaults.timeframe),
  limit: defaulted(Schema.Int.pipe(Schema.between(1, 500)), marketDefaults.limit),
  indicators: defaulted(Schema.Array(Indicator), marketDefaults.indicators)
}).annotations({
  ...allErrors,
  examples: [{ symbols: ["BTC"], timeframe: "1h", limit: 50, indicators: ["sma", "rsi"] }]
})
export type MarketDataQuery = typeof MarketDataQuery.Type

export const PriceSnapshot = Schema.Struct({
  price: Schema.Number,
  /** Percent change over 24 hours. */
  change_24h: Schema.Number,
  /** Quote (USD) volume over 24 hours. */
  volume_24h: Schema.Number,
  funding_rate: Schema.Number,
  /** In coins. */
  open_interest: Schema.Number
})
export type PriceSnapshot = typeof PriceSnapshot.Type

/** Symbols the venue does not list, each with a message; the others are served. */
const SymbolErrors = Schema.Record({ key: Schema.String, value: Schema.String })

export class PricesResponse extends Schema.Class<PricesResponse>("PricesResponse")({
  exchange: Exchange,
  timestamp: Schema.String,
  prices: Schema.Record({ key: Schema.String, value: PriceSnapshot }),
  errors: SymbolErrors
}) {}

export const SymbolMarketData = Schema.Struct({
  ...PriceSnapshot.fields,
  klines: Schema.Array(Candle),
  indicators: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.Number) }).annotations({
    description: "The latest value of each requested indicator (sma: SMA(20), ema: EMA(20), rsi: Wilder's RSI(14)), " +
      "computed by the `ta` helpers over the last 500 closed bars, the window a program sees, whatever `limit` is; " +
      "null with too few candles"
  })
})
export type SymbolMarketData = typeof SymbolMarketData.Type

export class MarketDataResponse extends Schema.Class<MarketDataResponse>("MarketDataResponse")({
  exchange: Exchange,
  timeframe: Timeframe,
  timestamp: Schema.String,
  symbols: Schema.Record({ key: Schema.String, value: SymbolMarketData }),
  errors: SymbolErrors
}) {}

/**
 * `GET /api/market/klines`: without `start`, the latest `limit` closed candles (before `end` when
 * given); with it, a page of up to `limit` candles from `start`, and `next_start` for the next page.
 */
export const KlinesParams = Schema.Struct({
  symbol: MarketSymbol,
  timeframe: defaultedParam(Timeframe, marketDefaults.timeframe),
  limit: defaultedParam(integerParam(1, 1000), marketDefaults.limit),
  exchange: defaultedParam(CandleExchange, marketDefaults.exchange),
  start: Schema.optional(Instant),
  end: Schema.optional(Instant)
})
export type KlinesParams = typeof KlinesParams.Type

export class KlinesResponse extends Schema.Class<KlinesResponse>("KlinesResponse")({
  exchange: CandleExchange,
  symbol: Schema.String,
  timeframe: Timeframe,
  klines: Schema.Array(Candle),
  /** With `start`: where the next page starts (ISO-8601), null on the last page; absent without `start`. */
  next_start: Schema.optional(Schema.NullOr(Schema.String))
}) {}

export const SymbolsParams = Schema.Struct({
  exchange: defaultedParam(Exchange, marketDefaults.exchange)
})
export type SymbolsParams = typeof SymbolsParams.Type

/** `GET /api/market/symbols`: the venue's universe. */
export class SymbolsResponse extends Schema.Class<SymbolsResponse>("SymbolsResponse")({
  exchange: Exchange,
  symbols: Schema.Array(SymbolSpec)
}) {}
