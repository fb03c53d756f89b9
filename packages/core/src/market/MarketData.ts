import { Cache, Clock, Data, Effect, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { InvalidInput, NotFound, SymbolNotListed } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { hostTa } from "../indicators/TaSource.js"
import { candleWindow } from "../sandbox/SandboxLimits.js"
import type { Owner } from "../users/Ownership.js"
import {
  type Candle,
  type Exchange,
  type FundingRate,
  type Ticker,
  type Timeframe,
  timeframeMillis,
  UnknownSymbol,
  Venues
} from "../venues/Venue.js"
import { finerTimeframes, openTimes, resample, uncovered, wholeBars } from "./Bars.js"
import { CandleStore, type Span } from "./CandleStore.js"
import { type CandleExchange, datasetName } from "./Dataset.js"
import { type DatasetRow, DatasetsRepo } from "./DatasetsRepo.js"
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

/**
 * The latest value of an indicator on the candles, by the `ta` helper programs call (null when
 * there are too few): given a program's window, the very number the program sees.
 */
const indicator = (name: Indicator, candles: ReadonlyArray<Candle>): number | null => {
  const value = hostTa[name](candles, period[name])
  return typeof value === "number" && Number.isFinite(value) ? value : null
}

interface SymbolKey {
  readonly exchange: Exchange
  readonly symbol: string
}
interface CandlesKey extends SymbolKey {
  readonly timeframe: Timeframe
  readonly limit: number
}

const unknownSymbol = (exchange: string) => `Unknown symbol on ${exchange}`

const notListed = (exchange: string, symbols: ReadonlyArray<string>) =>
  Effect.fail(new SymbolNotListed({ error: `Not listed on ${exchange}: ${symbols.join(", ")}`, symbols }))

/** Where a read's candles come from: a venue, or one of a user's imported datasets. */
export type CandleSource =
  | { readonly _tag: "Venue"; readonly exchange: Exchange }
  | { readonly _tag: "Dataset"; readonly dataset: DatasetRow }

/** The venue whose rules trades on the source follow. */
export const venueOf = (source: CandleSource): Exchange =>
  source._tag === "Venue" ? source.exchange : source.dataset.venue

/** What `exchange` names the source as. */
export const exchangeOf = (source: CandleSource): CandleExchange =>
  source._tag === "Venue" ? source.exchange : `dataset:${source.dataset.name}`

export interface CandlesQuery {
  readonly symbol: string
  readonly timeframe: Timeframe
  /** Open times in `[start, end)`, epoch ms; bars not closed yet are left out. */
  readonly start: number
  readonly end: number
}

const invalidRange = new InvalidInput({
  error: "end must be after start",
  issues: [{ path: "end", message: "must be after start" }]
})

const invalidTimeframe = (dataset: DatasetRow, timeframe: Timeframe) => {
  const message = `must be ${dataset.timeframe} or a coarser timeframe built from it; got '${timeframe}'`
  return new InvalidInput({
    error: `timeframe ${message} (dataset ${dataset.name} holds ${dataset.timeframe} bars)`,
    issues: [{ path: "timeframe", message }]
  })
}

/** Bars a venue is asked for at a time, each page stored (and its span covered) before the next. */
export const venuePageBars = 1_000

/**
 * Market data: candles of any range through the candle store (`candles`), and the API's reads from
 * the configured venues through a short-lived cache, so a burst of requests for the same data makes
 * one upstream call (concurrent lookups share it; failures are not cached).
 *
 * Every feature that reads candles (backtests, automation, the ranking, the signal engine, the
 * assistant) reads them here. An HTTP venue's bars are asked of the store first: what it has not
 * covered is built from a finer timeframe it has covered, else fetched from the venue a page at a
 * time, stored, and its span recorded as covered (a span the venue had no bars for is not asked
 * again). The simulated venues' bars are a pure function of time and are computed, never stored.
 * A dataset's bars are its imported ones, and coarser timeframes are built from them.
 */
export class MarketData extends Effect.Service<MarketData>()("@trading-platform/core/MarketData", {
  effect: Effect.gen(function*() {
    const venues = yield* Venues
    const store = yield* CandleStore
    const datasets = yield* DatasetsRepo
    const { venues: options } = yield* PlatformConfig
    const cached = <K, A, E>(lookup: (key: K) => Effect.Effect<A, E>) =>
      Effect.map(Cache.make({ capacity: 10_000, lookup, timeToLive: options.marketDataTtl }), (cache) => ({
        // A failure is dropped once it has answered the requests waiting on it.
        get: (key: K) => cache.get(key).pipe(Effect.tapError(() => cache.invalidate(key)))
      }))

    /** The source `exchange` names for the caller: 404 for a dataset the caller does not have. */
    const source = (caller: Owner, exchange: CandleExchange) => {
      const name = datasetName(exchange)
      if (name === undefined) return Effect.succeed<CandleSource>({ _tag: "Venue", exchange: exchange as Exchange })
      return Effect.flatMap(
        datasets.findByName(caller.id, name),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `Dataset ${name} not found` })),
          onSome: (dataset) => Effect.succeed<CandleSource>({ _tag: "Dataset", dataset })
        })
      )
    }

    /** Stores a venue's bars of `span` (on the timeframe's grid) and records the span as covered. */
    const keep = (
      key: { venue: string; symbol: string; timeframe: Timeframe },
      span: Span,
      bars: ReadonlyArray<Candle>
    ) =>
      Effect.gen(function*() {
        const id = yield* store.series(key)
        yield* store.write(id, bars)
        yield* store.cover(id, span)
      })

    /** Fills one uncovered span of a venue series: from a covered finer series, else from the venue, page by page. */
    const fill = (exchange: Exchange, symbol: string, timeframe: Timeframe, gap: Span) =>
      Effect.gen(function*() {
        const key = { venue: exchange, symbol, timeframe }
        for (const finer of finerTimeframes(timeframe)) {
          const id = yield* store.existing({ ...key, timeframe: finer })
          if (id === undefined) continue
          if (uncovered(gap, yield* store.coverage(id, gap)).length > 0) continue
          return yield* keep(key, gap, resample(yield* store.read(id, gap), timeframe))
        }
        const page = venuePageBars * timeframeMillis[timeframe]
        for (let from = gap.start; from < gap.end; from += page) {
          const span = { start: from, end: Math.min(gap.end, from + page) }
          yield* keep(key, span, yield* venues[exchange].candles({ symbol, timeframe, ...span }))
        }
      })

    /** Stores what the store has not covered of `wanted` (on the grid, closed bars only); answers the series' id. */
    const ensure = (exchange: Exchange, q: CandlesQuery, wanted: Span) =>
      Effect.gen(function*() {
        const key = { venue: exchange, symbol: q.symbol, timeframe: q.timeframe }
        const id = yield* store.existing(key)
        const gaps = id === undefined ? [wanted] : uncovered(wanted, yield* store.coverage(id, wanted))
        for (const gap of gaps) yield* fill(exchange, q.symbol, q.timeframe, gap)
        return id ?? (yield* store.series(key))
      })

    const fromVenue = (exchange: Exchange, q: CandlesQuery, wanted: Span) =>
      Effect.gen(function*() {
        const venue = venues[exchange]
        if (venue.simulated) return yield* venue.candles({ symbol: q.symbol, timeframe: q.timeframe, ...wanted })
        return yield* store.read(yield* ensure(exchange, q, wanted), wanted)
      })

    /**
     * Fetches an HTTP venue's bars of `[start, end)` into the store without reading them back (a
     * sync's page), answering how many bars the store then holds there.
     */
    const sync = (exchange: Exchange, q: CandlesQuery) =>
      Effect.gen(function*() {
        const wanted = openTimes(q, q.timeframe, yield* Clock.currentTimeMillis)
        if (wanted.start >= wanted.end) return 0
        return yield* store.count(yield* ensure(exchange, q, wanted), wanted)
      }).pipe(
        withRequestSpan("MarketData.sync", { attributes: { exchange, symbol: q.symbol, timeframe: q.timeframe } })
      )

    const fromDataset = (dataset: DatasetRow, q: CandlesQuery, wanted: Span) =>
      Effect.gen(function*() {
        if (q.symbol !== dataset.symbol) return yield* new UnknownSymbol({ symbol: q.symbol })
        const base = dataset.timeframe
        if (q.timeframe !== base && !finerTimeframes(q.timeframe).includes(base)) {
          return yield* invalidTimeframe(dataset, q.timeframe)
        }
        const id = yield* store.existing({
          venue: dataset.venue,
          symbol: dataset.symbol,
          timeframe: base,
          datasetId: dataset.id
        })
        if (id === undefined) return []
        if (q.timeframe === base) return yield* store.read(id, wanted)
        // Only coarser bars whose whole span the import covers: a partial bar would be a wrong one.
        const out: Array<Candle> = []
        for (const covered of yield* store.coverage(id, wanted)) {
          const span = wholeBars({
            start: Math.max(covered.start, wanted.start),
            end: Math.min(covered.end, wanted.end)
          }, q.timeframe)
          if (span.start < span.end) out.push(...resample(yield* store.read(id, span), q.timeframe))
        }
        return out
      })

    /**
     * Where the source's bars end: a venue's at the last closed bar (now), a dataset's after its
     * last imported bar (its bars are history, whatever the clock says).
     */
    const horizon = (from: CandleSource) =>
      Effect.gen(function*() {
        if (from._tag === "Venue") return yield* Clock.currentTimeMillis
        const { dataset } = from
        const id = yield* store.existing({
          venue: dataset.venue,
          symbol: dataset.symbol,
          timeframe: dataset.timeframe,
          datasetId: dataset.id
        })
        const last = id === undefined ? null : (yield* store.extent(id)).last
        return last === null ? -Infinity : last + timeframeMillis[dataset.timeframe]
      })

    /** Closed bars of the source with open time in `[start, end)`, oldest first. */
    const candles = (from: CandleSource, q: CandlesQuery) =>
      Effect.gen(function*() {
        const wanted = openTimes(q, q.timeframe, yield* horizon(from))
        if (wanted.start >= wanted.end) return [] as ReadonlyArray<Candle>
        return yield* (from._tag === "Venue"
          ? fromVenue(from.exchange, q, wanted)
          : fromDataset(from.dataset, q, wanted))
      }).pipe(
        withRequestSpan("MarketData.candles", {
          attributes: { exchange: exchangeOf(from), symbol: q.symbol, timeframe: q.timeframe }
        })
      )

    /**
     * The funding payments of `[start, end)` that have been paid: a simulated venue's computed, an
     * HTTP venue's from the store, with what it has not covered fetched and stored first. A dataset
     * holds none (its candles came without them).
     */
    const fundingRates = (
      from: CandleSource,
      q: { readonly symbol: string; readonly start: number; readonly end: number }
    ) =>
      Effect.gen(function*() {
        if (from._tag === "Dataset") return [] as ReadonlyArray<FundingRate>
        const venue = venues[from.exchange]
        const wanted = { start: q.start, end: Math.min(q.end, (yield* Clock.currentTimeMillis) + 1) }
        if (wanted.start >= wanted.end) return []
        if (venue.simulated) return yield* venue.fundingHistory({ symbol: q.symbol, ...wanted })
        const key = { venue: from.exchange, symbol: q.symbol, timeframe: "funding" } as const
        const known = yield* store.existing(key)
        const gaps = known === undefined ? [wanted] : uncovered(wanted, yield* store.coverage(known, wanted))
        const id = known ?? (gaps.length > 0 ? yield* store.series(key) : undefined)
        for (const gap of gaps) {
          yield* store.writeFunding(id!, yield* venue.fundingHistory({ symbol: q.symbol, ...gap }))
          yield* store.cover(id!, gap)
        }
        return yield* store.readFunding(id!, wanted)
      }).pipe(
        withRequestSpan("MarketData.fundingRates", { attributes: { exchange: exchangeOf(from), symbol: q.symbol } })
      )

    /** The latest `count` closed bars. */
    const latest = (from: CandleSource, symbol: string, timeframe: Timeframe, count: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const step = timeframeMillis[timeframe]
        const end = Math.floor(now / step) * step
        return candles(from, { symbol, timeframe, start: end - count * step, end })
      })

    // Keys are Data structs, so equal requests share one entry.
    const tickers = yield* cached((exchange: Exchange) => venues[exchange].tickers)
    const openInterest = yield* cached(({ exchange, symbol }: SymbolKey) => venues[exchange].openInterest(symbol))
    const latestOfVenue = yield* cached(({ exchange, limit, symbol, timeframe }: CandlesKey) =>
      latest({ _tag: "Venue", exchange }, symbol, timeframe, limit)
    )
    const latestCandles = (exchange: Exchange, symbol: string, timeframe: Timeframe, limit: number) =>
      latestOfVenue.get(Data.struct({ exchange, symbol, timeframe, limit }))

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

    /**
     * The one rule for a symbol the venue does not list (docs/errors.md): 422 `symbol_not_listed`
     * naming every such symbol. Every endpoint that takes symbols checks them here, but for the
     * lists of prices and market data, which answer the others and name these in `errors`.
     */
    const listed = (exchange: Exchange, symbols: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        if (symbols.length === 0) return
        const known = yield* tickers.get(exchange)
        const missing = Array.from(new Set(symbols.filter((s) => !known.has(s))))
        if (missing.length > 0) yield* notListed(exchange, missing)
      })

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
        withRequestSpan("MarketData.prices", {
          attributes: { exchange: input.exchange, symbols: input.symbols.length }
        })
      )
    }

    const klines = (caller: Owner, request: KlinesParams) =>
      Effect.gen(function*() {
        const params = { ...marketDefaults, ...request }
        const { symbol, timeframe } = params
        const from = yield* source(caller, params.exchange)
        const step = timeframeMillis[timeframe]
        const until = yield* horizon(from)
        const end = params.end === undefined ? until : Date.parse(params.end)
        const respond = (klines: ReadonlyArray<Candle>, next_start?: string | null) =>
          new KlinesResponse({ exchange: params.exchange, symbol, timeframe, klines, next_start })
        if (params.start === undefined) {
          if (params.end === undefined && from._tag === "Venue") {
            return respond(yield* latestCandles(from.exchange, symbol, timeframe, params.limit))
          }
          const last = Math.min(Math.ceil(end / step) * step, Math.floor(until / step) * step)
          return respond(yield* candles(from, { symbol, timeframe, start: last - params.limit * step, end: last }))
        }
        const start = Date.parse(params.start)
        // Without an `end`, a start past the data's end is an empty last page, not a mistake.
        if (params.end === undefined && start >= end) return respond([], null)
        if (!(start < end)) return yield* invalidRange
        // A page is `limit` bar slots: a gap in the data makes it shorter, never skips bars.
        const pageEnd = Math.min(end, Math.ceil(start / step) * step + params.limit * step)
        const bars = yield* candles(from, { symbol, timeframe, start, end: pageEnd })
        const more = pageEnd < Math.min(end, Math.floor(until / step) * step)
        return respond(bars, more ? new Date(pageEnd).toISOString() : null)
      }).pipe(
        Effect.catchTag("UnknownSymbol", (e) => notListed(request.exchange ?? marketDefaults.exchange, [e.symbol])),
        withRequestSpan("MarketData.klines", { attributes: { exchange: request.exchange, symbol: request.symbol } })
      )

    const symbolsOf = yield* cached((exchange: Exchange) => venues[exchange].symbols)
    const symbols = (request: SymbolsParams) => {
      const exchange = request.exchange ?? marketDefaults.exchange
      return symbolsOf.get(exchange).pipe(
        Effect.map((symbols) => new SymbolsResponse({ exchange, symbols })),
        withRequestSpan("MarketData.symbols", { attributes: { exchange } })
      )
    }

    const query = (request: MarketDataQuery) => {
      const input = { ...marketDefaults, ...request }
      return perSymbol(input.exchange, input.symbols, (ticker) =>
        Effect.zipWith(
          snapshot(input.exchange, ticker),
          // Indicators are read over a program's whole window, so they match what programs and the ranking see.
          latestCandles(
            input.exchange,
            ticker.symbol,
            input.timeframe,
            input.indicators.length > 0 ? Math.max(input.limit, candleWindow) : input.limit
          ).pipe(Effect.catchTag("UnknownSymbol", Effect.die)),
          (snap, bars: ReadonlyArray<Candle>): SymbolMarketData => {
            const window = bars.slice(-candleWindow)
            return {
              ...snap,
              klines: bars.slice(-input.limit),
              indicators: Object.fromEntries(input.indicators.map((name) => [name, indicator(name, window)]))
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
          withRequestSpan("MarketData.query", {
            attributes: { exchange: input.exchange, symbols: input.symbols.length }
          })
        )
    }

    /** Whether the source has bars of the symbol and timeframe: 422 for a symbol it does not list, 400 for a timeframe a dataset cannot build. */
    const check = (from: CandleSource, symbol: string, timeframe: Timeframe) =>
      Effect.gen(function*() {
        if (from._tag === "Venue") {
          return yield* listed(from.exchange, [symbol])
        }
        const { dataset } = from
        if (symbol !== dataset.symbol) {
          return yield* new SymbolNotListed({
            error: `Dataset ${dataset.name} holds ${dataset.symbol}, not ${symbol}`,
            symbols: [symbol]
          })
        }
        if (timeframe !== dataset.timeframe && !finerTimeframes(timeframe).includes(dataset.timeframe)) {
          return yield* invalidTimeframe(dataset, timeframe)
        }
      })

    return { source, check, listed, candles, latest, sync, fundingRates, prices, klines, symbols, query } as const
  }),
  dependencies: [CandleStore.Default, DatasetsRepo.Default]
}) {}
