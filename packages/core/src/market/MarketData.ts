import { Cache, Clock, Data, Effect } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { NotFound } from "../http/Errors.js"
import { type Candle, type Exchange, type Ticker, type Timeframe, timeframeMillis, Venues } from "../venues/Venue.js"
import {
  type Indicator,
  type KlinesParams,
  KlinesResponse,
  type MarketDataQuery,
  MarketDataResponse,
  marketDefaults,
  type PriceSnapshot,
  type PricesRequest,
  PricesResponse,
  type SymbolMarketData,
  type SymbolsParams,
  SymbolsResponse
} from "./Market.js"

const period = { sma: 20, ema: 20, rsi: 14 } as const

/** The latest value of an indicator on the closes, or null when there are too few. */
const indicator = (name: Indicator, closes: ReadonlyArray<number>): number | null => {
  const n = period[name]
  if (closes.length < n + (name === "rsi" ? 1 : 0)) return null
  if (name === "sma") return closes.slice(-n).reduce((a, b) => a + b, 0) / n
  if (name === "ema") {
    const k = 2 / (n + 1)
    return closes.slice(n).reduce((ema, c) => c * k + ema * (1 - k), closes.slice(0, n).reduce((a, b) => a + b, 0) / n)
  }
  let gain = 0
  let loss = 0
  for (let i = closes.length - n; i < closes.length; i++) {
    const change = closes[i]! - closes[i - 1]!
    if (change > 0) gain += change
    else loss -= change
  }
  return loss === 0 ? 100 : 100 - 100 / (1 + gain / loss)
}

interface SymbolKey {
  readonly exchange: Exchange
  readonly symbol: string
}
interface CandlesKey extends SymbolKey {
  readonly timeframe: Timeframe
  readonly limit: number
}

const unknownSymbol = (exchange: Exchange) => `Unknown symbol on ${exchange}`

/**
 * Market data for the API, from the configured venues through a short-lived cache: a burst of
 * requests for the same data makes one upstream call (concurrent lookups share it). Failures are
 * not cached.
 */
export class MarketData extends Effect.Service<MarketData>()("@trading-platform/core/MarketData", {
  effect: Effect.gen(function*() {
    const venues = yield* Venues
    const { venues: options } = yield* PlatformConfig
    const cached = <K, A, E>(lookup: (key: K) => Effect.Effect<A, E>) =>
      Effect.map(Cache.make({ capacity: 10_000, lookup, timeToLive: options.marketDataTtl }), (cache) => ({
        // A failure is dropped once it has answered the requests waiting on it.
        get: (key: K) => cache.get(key).pipe(Effect.tapError(() => cache.invalidate(key)))
      }))

    // Keys are Data structs, so equal requests share one entry.
    const tickers = yield* cached((exchange: Exchange) => venues[exchange].tickers)
    const openInterest = yield* cached(({ exchange, symbol }: SymbolKey) => venues[exchange].openInterest(symbol))
    const candles = yield* cached(({ exchange, limit, symbol, timeframe }: CandlesKey) =>
      Effect.gen(function*() {
        const step = timeframeMillis[timeframe]
        // The latest `limit` closed bars.
        const end = Math.floor((yield* Clock.currentTimeMillis) / step) * step
        return yield* venues[exchange].candles({ symbol, timeframe, start: end - limit * step, end })
      })
    )
    const latestCandles = (exchange: Exchange, symbol: string, timeframe: Timeframe, limit: number) =>
      candles.get(Data.struct({ exchange, symbol, timeframe, limit }))

    // Listed symbols are known, so an UnknownSymbol for one of them is a venue inconsistency.
    const snapshot = (exchange: Exchange, ticker: Ticker) =>
      Effect.map(
        openInterest.get(Data.struct({ exchange, symbol: ticker.symbol })).pipe(
          Effect.catchTag("UnknownSymbol", Effect.die)
        ),
        (open_interest): PriceSnapshot => ({
          price: ticker.price,
          change_24h: ticker.change_24h,
          volume_24h: ticker.volume_24h,
          funding_rate: ticker.funding_rate,
          open_interest
        })
      )

    /** Runs `f` for each listed symbol; unlisted ones land in `errors`. */
    const perSymbol = <A, E>(
      exchange: Exchange,
      symbols: ReadonlyArray<string>,
      f: (ticker: Ticker) => Effect.Effect<A, E>
    ) =>
      Effect.gen(function*() {
        const listed = yield* tickers.get(exchange)
        const unique = Array.from(new Set(symbols))
        const results = yield* Effect.forEach(unique, (symbol): Effect.Effect<readonly [string, A | undefined], E> => {
          const ticker = listed.get(symbol)
          return ticker
            ? Effect.map(f(ticker), (a) => [symbol, a] as const)
            : Effect.succeed([symbol, undefined] as const)
        }, { concurrency: 8 })
        const found: Record<string, A> = {}
        const errors: Record<string, string> = {}
        for (const [symbol, a] of results) {
          if (a === undefined) errors[symbol] = unknownSymbol(exchange)
          else found[symbol] = a
        }
        return { found, errors, timestamp: new Date(yield* Clock.currentTimeMillis).toISOString() }
      })

    const prices = (request: PricesRequest) => {
      const input = { ...marketDefaults, ...request }
      return Effect.map(
        perSymbol(input.exchange, input.symbols, (t) => snapshot(input.exchange, t)),
        ({ errors, found, timestamp }) =>
          new PricesResponse({ exchange: input.exchange, timestamp, prices: found, errors })
      ).pipe(
        Effect.withSpan("MarketData.prices", {
          attributes: { exchange: input.exchange, symbols: input.symbols.length }
        })
      )
    }

    const klines = (request: KlinesParams) => {
      const params = { ...marketDefaults, ...request }
      return latestCandles(params.exchange, params.symbol, params.timeframe, params.limit).pipe(
        Effect.catchTag(
          "UnknownSymbol",
          () => Effect.fail(new NotFound({ error: `${unknownSymbol(params.exchange)}: ${params.symbol}` }))
        ),
        Effect.map((klines) =>
          new KlinesResponse({ exchange: params.exchange, symbol: params.symbol, timeframe: params.timeframe, klines })
        ),
        Effect.withSpan("MarketData.klines", { attributes: { exchange: params.exchange, symbol: params.symbol } })
      )
    }

    const symbolsOf = yield* cached((exchange: Exchange) => venues[exchange].symbols)
    const symbols = (request: SymbolsParams) => {
      const exchange = request.exchange ?? marketDefaults.exchange
      return symbolsOf.get(exchange).pipe(
        Effect.map((symbols) => new SymbolsResponse({ exchange, symbols })),
        Effect.withSpan("MarketData.symbols", { attributes: { exchange } })
      )
    }

    const query = (request: MarketDataQuery) => {
      const input = { ...marketDefaults, ...request }
      return perSymbol(input.exchange, input.symbols, (ticker) =>
        Effect.zipWith(
          snapshot(input.exchange, ticker),
          latestCandles(input.exchange, ticker.symbol, input.timeframe, input.limit).pipe(
            Effect.catchTag("UnknownSymbol", Effect.die)
          ),
          (snap, bars: ReadonlyArray<Candle>): SymbolMarketData => {
            const closes = bars.map((b) => b.close)
            return {
              ...snap,
              klines: bars,
              indicators: Object.fromEntries(input.indicators.map((name) => [name, indicator(name, closes)]))
            }
          }
        )).pipe(
          Effect.map(({ errors, found, timestamp }) =>
            new MarketDataResponse({
              exchange: input.exchange,
              timeframe: input.timeframe,
              timestamp,
              symbols: found,
              errors
            })
          ),
          Effect.withSpan("MarketData.query", {
            attributes: { exchange: input.exchange, symbols: input.symbols.length }
          })
        )
    }

    return { prices, klines, symbols, query } as const
  })
}) {}
