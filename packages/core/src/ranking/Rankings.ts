import { Cache, Clock, Data, Effect } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { NoFactorHistory, NotFound } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { MarketData } from "../market/MarketData.js"
import { SignalEngine } from "../signals/SignalEngine.js"
import { letOthersIn } from "../sql/LetOthersIn.js"
import { type Candle, type Exchange, type Timeframe, timeframeMillis, type Venue, Venues } from "../venues/Venue.js"
import { builtinFactors, type FactorDefinition, findFactor, type MarketInput, taCall } from "./FactorCatalogue.js"
import { factorValue, rankSymbols, tableBars } from "./FactorTable.js"
import { spearman, summarise } from "./InformationCoefficient.js"
import {
  Factor,
  FactorEffectiveness,
  type FactorParams,
  FactorsResponse,
  rankingDefaults,
  RankingTable,
  type TableParams
} from "./Ranking.js"

/** Bars of history the information coefficient is measured over. */
export const effectivenessBars = 200

/** Trades and order-book levels sampled for the taker buy ratio and the depth imbalance. */
const sampledTrades = 200
const sampledLevels = 20

const toFactor = (f: FactorDefinition) =>
  new Factor({
    id: f.id,
    key: f.key,
    name: f.name,
    category: f.category,
    description: f.description,
    source: "builtin",
    higher_is: f.higher_is,
    ta: taCall(f)
  })

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

/** A ratio, or null where it is undefined. */
const ratio = (num: number, den: number) => (den === 0 ? null : num / den)

interface TableKey {
  readonly exchange: Exchange
  readonly timeframe: Timeframe
  /** Each chosen factor's key and weight, in catalogue order. */
  readonly weights: ReadonlyArray<readonly [string, number]>
}

interface EffectivenessKey {
  readonly exchange: Exchange
  readonly timeframe: Timeframe
  readonly key: string
  readonly horizon: number
}

/**
 * The cross-sectional ranking: each factor over every symbol the venue lists, normalised and
 * combined (`FactorTable`), and each candle factor's information coefficient. Both are computed
 * once per key and served from a cache for `RANKING_CACHE_S`; concurrent requests for the same key
 * share one computation, and a failure is not kept.
 */
export class Rankings extends Effect.Service<Rankings>()("@trading-platform/core/Rankings", {
  effect: Effect.gen(function*() {
    const venues = yield* Venues
    const market = yield* MarketData
    const engine = yield* SignalEngine
    const { ranking } = yield* PlatformConfig

    /** The latest `count` closed bars of a symbol; none when the venue no longer lists it. */
    const latestCandles = (exchange: Exchange, symbol: string, timeframe: Timeframe, count: number) =>
      market.latest({ _tag: "Venue", exchange }, symbol, timeframe, count).pipe(
        Effect.catchTag("UnknownSymbol", () => Effect.succeed([] as ReadonlyArray<Candle>))
      )

    /**
     * Percent change of open interest over the last bar of the timeframe, from the signal engine's
     * samples (taken for the symbols of enabled pools); null with fewer than two samples in it.
     */
    const openInterestChange = (exchange: Exchange, symbol: string, timeframe: Timeframe) =>
      Effect.gen(function*() {
        const since = (yield* Clock.currentTimeMillis) - timeframeMillis[timeframe]
        const samples = yield* engine.samples(exchange, symbol, since)
        if (samples.length < 2) return null
        const first = samples[0]!.open_interest
        return ratio((samples[samples.length - 1]!.open_interest - first) * 100, first)
      })

    /** The sampled market values the factors need, null where the venue has none. */
    const sample = (
      venue: Venue,
      symbol: string,
      timeframe: Timeframe,
      funding: number,
      inputs: ReadonlySet<MarketInput>
    ) =>
      Effect.all({
        funding_rate: Effect.succeed(inputs.has("funding_rate") ? funding : null),
        open_interest_change: inputs.has("open_interest_change")
          ? openInterestChange(venue.exchange, symbol, timeframe)
          : Effect.succeed(null),
        taker_buy_ratio: inputs.has("taker_buy_ratio")
          ? Effect.map(venue.trades(symbol, sampledTrades), (trades) =>
            ratio(
              sum(
                trades.filter((t) => t.side === "buy").map((t) => t.size)
              ),
              sum(trades.map((t) => t.size))
            ))
          : Effect.succeed(null),
        depth_imbalance: inputs.has("depth_imbalance")
          ? Effect.map(venue.depth(symbol, sampledLevels), (book) => {
            const bids = sum(book.bids.map(([, size]) => size)), asks = sum(book.asks.map(([, size]) => size))
            return ratio(bids - asks, bids + asks)
          })
          : Effect.succeed(null)
      }, { concurrency: "unbounded" }).pipe(Effect.catchTag("UnknownSymbol", () => Effect.succeed({})))

    /** Candles (`bars` of them, when a candle factor is chosen) and market samples of every listed symbol. */
    const inputsOf = (
      exchange: Exchange,
      timeframe: Timeframe,
      factors: ReadonlyArray<FactorDefinition>,
      bars: number
    ) =>
      Effect.gen(function*() {
        const venue = venues[exchange]
        const tickers = yield* venue.tickers
        const needsCandles = factors.some((f) => f.input.kind === "ta")
        const markets = new Set(factors.flatMap((f) => (f.input.kind === "market" ? [f.input.input] : [])))
        // A symbol's reads (computed, for a simulated venue) at a time, with other requests let in between.
        return yield* Effect.forEach(Array.from(tickers.values()), (ticker) =>
          Effect.zipRight(
            letOthersIn,
            Effect.all({
              symbol: Effect.succeed(ticker.symbol),
              candles: needsCandles ? latestCandles(exchange, ticker.symbol, timeframe, bars) : Effect.succeed([]),
              market: sample(venue, ticker.symbol, timeframe, ticker.funding_rate, markets)
            })
          ), { concurrency: 8 })
      })

    const now = Effect.map(Clock.currentTimeMillis, (t) => new Date(t).toISOString())

    const computeTable = ({ exchange, timeframe, weights }: TableKey) =>
      Effect.gen(function*() {
        const chosen = weights.map(([key, weight]) => [findFactor(key)!, weight] as const)
        const inputs = yield* inputsOf(exchange, timeframe, chosen.map(([f]) => f), tableBars)
        const { errors, rows } = rankSymbols(inputs, chosen)
        return { rows, errors, computed_at: yield* now }
      }).pipe(
        withRequestSpan("Rankings.computeTable", { attributes: { exchange, timeframe, factors: weights.length } })
      )

    /** The coefficient at each bar that has a full window behind it and `horizon` bars ahead. */
    const computeEffectiveness = ({ exchange, horizon, key, timeframe }: EffectivenessKey) =>
      Effect.gen(function*() {
        const factor = findFactor(key)!
        const step = timeframeMillis[timeframe]
        const inputs = yield* inputsOf(exchange, timeframe, [factor], tableBars + effectivenessBars + horizon - 1)
        const indexed = inputs.map((s) => ({ s, at: new Map(s.candles.map((c, i) => [c.time, i])) }))
        const times = Array.from(new Set(inputs.flatMap((s) => s.candles.map((c) => c.time)))).sort((a, b) => a - b)
        const series: Array<{ time: string; ic: number }> = []
        for (const time of times.slice(tableBars - 1, times.length - horizon)) {
          const values: Array<number> = [], returns: Array<number> = []
          for (const { at, s } of indexed) {
            const i = at.get(time), j = at.get(time + horizon * step)
            if (i === undefined || j === undefined || s.candles[i]!.close === 0) continue
            const value = factorValue(factor, { ...s, candles: s.candles.slice(Math.max(0, i + 1 - tableBars), i + 1) })
            if (value === null) continue
            values.push(value)
            returns.push(s.candles[j]!.close / s.candles[i]!.close - 1)
          }
          const ic = spearman(values, returns)
          if (ic !== null) series.push({ time: new Date(time).toISOString(), ic })
        }
        return {
          computed_at: yield* now,
          ic: { ...summarise(series.map((p) => p.ic), factor.higher_is), series }
        }
      }).pipe(
        withRequestSpan("Rankings.computeEffectiveness", { attributes: { exchange, timeframe, factor: key, horizon } })
      )

    const cached = <K, A, E>(lookup: (key: K) => Effect.Effect<A, E>) =>
      Effect.map(Cache.make({ capacity: 1_000, lookup, timeToLive: ranking.cacheTtl }), (cache) => (key: K) =>
        // A failure answers the requests waiting on it, then is dropped.
        cache.get(key).pipe(Effect.tapError(() => cache.invalidate(key))))
    const tables = yield* cached(computeTable)
    const effectiveness = yield* cached(computeEffectiveness)

    const factors = Effect.succeed(new FactorsResponse({ factors: builtinFactors.map(toFactor) }))

    const table = Effect.fn("Rankings.table")(function*(request: TableParams) {
      const params = { ...rankingDefaults, ...request }
      const chosen = new Set<string>(params.factors ?? builtinFactors.map((f) => f.key))
      const given = new Map<string, number>(params.weights ?? [])
      // Catalogue order, so the same choice in any order is one cache entry.
      const weights = builtinFactors.filter((f) => chosen.has(f.key)).map((f) =>
        Data.tuple(f.key, given.get(f.key) ?? 1)
      )
      const { computed_at, errors, rows } = yield* tables(
        Data.struct({ exchange: params.exchange, timeframe: params.timeframe, weights: Data.array(weights) })
      )
      return new RankingTable({
        rows: rows.slice(0, params.limit),
        computed_at,
        timeframe: params.timeframe,
        exchange: params.exchange,
        weights: Object.fromEntries(weights),
        errors
      })
    })

    const factorEffectiveness = Effect.fn("Rankings.factorEffectiveness")(
      function*(ref: string, request: FactorParams) {
        const params = { ...rankingDefaults, ...request }
        const factor = findFactor(ref)
        if (factor === undefined) return yield* new NotFound({ error: `Unknown factor: ${ref}` })
        if (factor.input.kind !== "ta") {
          return yield* new NoFactorHistory({
            error: `${factor.key} is sampled from the venue now and has no history to measure`
          })
        }
        const { computed_at, ic } = yield* effectiveness(
          Data.struct({
            exchange: params.exchange,
            timeframe: params.timeframe,
            key: factor.key,
            horizon: params.horizon
          })
        )
        return new FactorEffectiveness({
          factor: toFactor(factor),
          exchange: params.exchange,
          timeframe: params.timeframe,
          horizon: params.horizon,
          computed_at,
          ic
        })
      }
    )

    return { factors, table, factorEffectiveness } as const
  })
}) {}
