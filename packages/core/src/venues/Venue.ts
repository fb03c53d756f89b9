import { Context, type Effect, Schema } from "effect"
import type { Unavailable, UpstreamError, UpstreamTimeout, VenueRejected } from "../http/Errors.js"
import { MarginTable } from "./MarginTiers.js"

export const Exchange = Schema.Literal("venue1", "venue2")
export type Exchange = typeof Exchange.Type

export const Timeframe = Schema.Literal("1m", "5m", "15m", "30m", "1h", "4h", "1d")
export type Timeframe = typeof Timeframe.Type

export const timeframeMillis: Record<Timeframe, number> = {
  "1m": 60_000,
  "5m": 300_000,
  "15m": 900_000,
  "30m": 1_800_000,
  "1h": 3_600_000,
  "4h": 14_400_000,
  "1d": 86_400_000
}

/** The longer timeframes a program reads besides its run's own (`data.timeframes`): at most four, none twice. */
export const LongerTimeframes = Schema.Array(Timeframe).pipe(
  Schema.maxItems(4),
  Schema.filter((list) => new Set(list).size === list.length || "must not repeat a timeframe")
)

/**
 * Why a run of `timeframe` bars cannot build `longer`'s candles (each must be longer and a whole
 * number of its bars), as an input issue naming the entry; undefined when it can.
 */
export const longerTimeframeIssue = (timeframe: Timeframe, longer: ReadonlyArray<Timeframe>) => {
  const step = timeframeMillis[timeframe]
  const i = longer.findIndex((t) => timeframeMillis[t] <= step || timeframeMillis[t] % step !== 0)
  return i === -1 ? undefined : {
    path: `timeframes.${i}`,
    message: `must be longer than ${timeframe} and a whole number of ${timeframe} bars; got ${longer[i]}`
  }
}

/** A closed bar; `time` is its open time in epoch milliseconds (as both venues send it). */
export const Candle = Schema.Struct({
  time: Schema.Number,
  open: Schema.Number,
  high: Schema.Number,
  low: Schema.Number,
  close: Schema.Number,
  volume: Schema.Number
})
export type Candle = typeof Candle.Type

/** The 24-hour view of one symbol. */
export interface Ticker {
  readonly symbol: string
  readonly price: number
  readonly change_24h: number
  readonly volume_24h: number
  readonly funding_rate: number
}

export interface Funding {
  readonly rate: number
  readonly next_funding_time: number
}

/** A funding payment of a perpetual: its time (epoch ms) and the rate paid, a fraction of notional (longs pay when positive). */
export interface FundingRate {
  readonly time: number
  readonly rate: number
}

/**
 * A listed symbol's rules, as the venue states them (docs/trading-rules.md): every order is
 * rounded to its steps and checked against its minimums and leverage caps before it is sent.
 */
export const SymbolSpec = Schema.Struct({
  symbol: Schema.String,
  /** The smallest price step. */
  tick_size: Schema.Number,
  /** The quantity step (in coins): an order's quantity is a whole number of lots. */
  lot_size: Schema.Number,
  /** The smallest quantity an order may have. */
  min_quantity: Schema.Number,
  /** The smallest notional (quantity × price, in quote currency) an order may have. */
  min_notional: Schema.Number,
  /** The highest leverage the venue allows on the symbol, at the smallest notional. */
  max_leverage: Schema.Number,
  /** The symbol's margin brackets (none above `max_leverage`) and liquidation fee. */
  margin: MarginTable
})
export type SymbolSpec = typeof SymbolSpec.Type

/** Price levels as `[price, size]`, best first. */
export interface OrderBook {
  readonly bids: ReadonlyArray<readonly [number, number]>
  readonly asks: ReadonlyArray<readonly [number, number]>
}

export interface Trade {
  readonly time: number
  readonly price: number
  readonly size: number
  readonly side: "buy" | "sell"
}

export interface Balance {
  readonly asset: string
  readonly total: number
  readonly available: number
}

export interface Position {
  readonly symbol: string
  readonly side: "long" | "short"
  readonly size: number
  readonly entry_price: number
  readonly leverage: number
}

export interface OrderRequest {
  readonly symbol: string
  readonly side: "buy" | "sell"
  readonly quantity: number
  /** A limit price; a market order when absent. */
  readonly price?: number
  /**
   * The caller's key for the order, sent as the venue's client order id (each venue hashes it to
   * its own format), so the venue refuses a second order with the same key.
   */
  readonly client_order_id?: string
  /** The order may only shrink the position (a close): the venue refuses or trims what would open or grow one. */
  readonly reduce_only?: boolean
}

/**
 * A take profit or a stop loss resting at the venue (its own conditional order): when the mark
 * reaches `trigger_price` the venue closes the position at market, whether the platform is up or not.
 */
export interface ProtectionRequest {
  readonly symbol: string
  readonly kind: "take_profit" | "stop_loss"
  /** The side of the closing order: `sell` protects a long. */
  readonly side: "buy" | "sell"
  readonly trigger_price: number
  /** The position's size: venue1 closes this much, venue2 closes the whole position (`closePosition`). */
  readonly quantity: number
  readonly client_order_id: string
}

/** An order as the venue knows it, found by its client order id. */
export interface VenueOrder {
  readonly order_id: string
  /** `open` rests (or waits for its trigger); `cancelled` is done with `filled_quantity` executed, perhaps none. */
  readonly status: "filled" | "open" | "cancelled"
  readonly filled_quantity: number
  readonly average_price: number | null
}

export interface OrderResult {
  readonly order_id: string
  readonly status: "filled" | "open"
  readonly filled_quantity: number
  readonly average_price: number | null
  /** Fee paid, in quote currency; null when the venue does not say. */
  readonly fee: number | null
}

/** What a venue needs to act for an account: a wallet (venue1) or an API key pair (venue2). */
export type VenueCredentials =
  | { readonly kind: "wallet"; readonly environment: string; readonly address: string; readonly privateKey: string }
  | { readonly kind: "apiKey"; readonly environment: string; readonly apiKey: string; readonly secretKey: string }

/** The symbol is not listed on the venue. */
export class UnknownSymbol extends Schema.TaggedError<UnknownSymbol>()("UnknownSymbol", { symbol: Schema.String }) {}

/** The venue did not answer (503), answered a failure (502), or too late (504). */
export type VenueFailure = UpstreamError | Unavailable | UpstreamTimeout

/**
 * What the platform needs from an exchange. Symbols are bare coin names (`BTC`); each venue maps
 * them to its own. Implemented by the simulation and by each venue's HTTP API.
 */
export interface Venue {
  readonly exchange: Exchange
  /** Its market is a pure function of time (the simulation): the candle store keeps none of its bars. */
  readonly simulated: boolean
  /** The listed symbols with their rules: steps, minimums, leverage cap and margin brackets. */
  readonly symbols: Effect.Effect<ReadonlyArray<SymbolSpec>, VenueFailure>
  /** Every listed symbol's ticker, in one answer. */
  readonly tickers: Effect.Effect<ReadonlyMap<string, Ticker>, VenueFailure>
  /** Closed candles whose open time lies in `[start, end)`, oldest first. */
  readonly candles: (
    query: { readonly symbol: string; readonly timeframe: Timeframe; readonly start: number; readonly end: number }
  ) => Effect.Effect<ReadonlyArray<Candle>, VenueFailure | UnknownSymbol>
  readonly funding: (symbol: string) => Effect.Effect<Funding, VenueFailure | UnknownSymbol>
  /** The funding payments whose time lies in `[start, end)` and has passed, oldest first. */
  readonly fundingHistory: (
    query: { readonly symbol: string; readonly start: number; readonly end: number }
  ) => Effect.Effect<ReadonlyArray<FundingRate>, VenueFailure | UnknownSymbol>
  /** Open interest in coins. */
  readonly openInterest: (symbol: string) => Effect.Effect<number, VenueFailure | UnknownSymbol>
  readonly depth: (symbol: string, levels: number) => Effect.Effect<OrderBook, VenueFailure | UnknownSymbol>
  /** The most recent trades, newest first. */
  readonly trades: (symbol: string, limit: number) => Effect.Effect<ReadonlyArray<Trade>, VenueFailure | UnknownSymbol>
  /** Succeeds when the venue accepts the credentials. */
  readonly checkCredentials: (credentials: VenueCredentials) => Effect.Effect<void, VenueFailure | VenueRejected>
  readonly balances: (
    credentials: VenueCredentials
  ) => Effect.Effect<ReadonlyArray<Balance>, VenueFailure | VenueRejected>
  readonly positions: (
    credentials: VenueCredentials
  ) => Effect.Effect<ReadonlyArray<Position>, VenueFailure | VenueRejected>
  readonly placeOrder: (
    credentials: VenueCredentials,
    order: OrderRequest
  ) => Effect.Effect<OrderResult, VenueFailure | VenueRejected | UnknownSymbol>
  readonly cancelOrder: (
    credentials: VenueCredentials,
    order: { readonly symbol: string; readonly order_id: string }
  ) => Effect.Effect<void, VenueFailure | VenueRejected>
  /** The order sent with this client order id (the caller's key, hashed as `placeOrder` does); none when the venue never got it. */
  readonly orderByKey: (
    credentials: VenueCredentials,
    order: { readonly symbol: string; readonly client_order_id: string }
  ) => Effect.Effect<VenueOrder | undefined, VenueFailure | VenueRejected | UnknownSymbol>
  /** Sets the symbol's leverage and margin mode for the account, before its orders go out. */
  readonly setLeverage: (
    credentials: VenueCredentials,
    setting: { readonly symbol: string; readonly leverage: number; readonly margin_mode: "cross" | "isolated" }
  ) => Effect.Effect<void, VenueFailure | VenueRejected | UnknownSymbol>
  /** Rests a take profit or stop loss at the venue; answers its order id. */
  readonly placeProtection: (
    credentials: VenueCredentials,
    protection: ProtectionRequest
  ) => Effect.Effect<string, VenueFailure | VenueRejected | UnknownSymbol>
  /**
   * Arms the venue's dead-man switch: unless armed again before `deadline` (epoch ms), the venue
   * cancels the account's open orders on `symbols` then; null disarms it.
   */
  readonly cancelAllAfter: (
    credentials: VenueCredentials,
    arm: { readonly symbols: ReadonlyArray<string>; readonly deadline: number | null }
  ) => Effect.Effect<void, VenueFailure | VenueRejected>
}

/** Both venues, each the simulation or its HTTP API as configured. */
export class Venues extends Context.Tag("@trading-platform/core/Venues")<Venues, Readonly<Record<Exchange, Venue>>>() {}
