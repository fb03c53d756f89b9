import { Effect, Either } from "effect"
import { type Exchange, type Ticker, UnknownSymbol, type Venue, type VenueFailure } from "../venues/Venue.js"
import { depthLevels, type MarketSample } from "./MarketSample.js"

/** Trades read per symbol and round; more than a round's worth on the simulated venue (one a second). */
const tradesPerSample = 1_000

/** How one symbol's sample went: the sample, or why there is none. */
export type SampleResult = Either.Either<MarketSample, VenueFailure | UnknownSymbol>

/** A failed sample's reason, as the pool status shows it. */
export const describeFailure = (error: VenueFailure | UnknownSymbol) =>
  error._tag === "UnknownSymbol" ? `${error.symbol} is not listed` : error.error

/**
 * Samples `symbols` of one venue at `at`: one tickers call, then open interest, depth and recent
 * trades per symbol. Taker volumes count the trades after `previous(symbol)` (the last sample's
 * time), or within `interval` before `at` for a first sample. A failure of one symbol is its own
 * result and never stops the others.
 */
export const sampleSymbols = (
  venue: Venue,
  symbols: ReadonlyArray<string>,
  at: number,
  since: (symbol: string) => number
): Effect.Effect<ReadonlyMap<string, SampleResult>> =>
  Effect.gen(function*() {
    const tickers = yield* Effect.either(venue.tickers)
    const one = (symbol: string): Effect.Effect<MarketSample, VenueFailure | UnknownSymbol> =>
      Effect.gen(function*() {
        if (Either.isLeft(tickers)) return yield* Effect.fail(tickers.left)
        const ticker: Ticker | undefined = tickers.right.get(symbol)
        if (ticker === undefined) return yield* new UnknownSymbol({ symbol })
        const [openInterest, book, trades] = yield* Effect.all([
          venue.openInterest(symbol),
          venue.depth(symbol, depthLevels),
          venue.trades(symbol, tradesPerSample)
        ], { concurrency: 3 })
        const from = since(symbol)
        let buy = 0
        let sell = 0
        for (const trade of trades) {
          if (trade.time <= from || trade.time > at) continue
          if (trade.side === "buy") buy += trade.price * trade.size
          else sell += trade.price * trade.size
        }
        const value = (levels: ReadonlyArray<readonly [number, number]>) =>
          levels.reduce((total, [price, size]) => total + price * size, 0)
        return {
          exchange: venue.exchange as Exchange,
          symbol,
          sampled_at: at,
          price: ticker.price,
          volume_24h: ticker.volume_24h,
          open_interest: openInterest,
          funding_rate: ticker.funding_rate,
          taker_buy_volume: buy,
          taker_sell_volume: sell,
          bid_depth: value(book.bids),
          ask_depth: value(book.asks)
        }
      })
    const results = yield* Effect.forEach(
      symbols,
      (symbol) => Effect.map(Effect.either(one(symbol)), (result) => [symbol, result] as const),
      { concurrency: 8 }
    )
    return new Map(results)
  })
