import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schema, TestClock } from "effect"
import { PlatformConfig, platformOptions } from "../../src/config/PlatformConfig.js"
import { UpstreamError } from "../../src/http/Errors.js"
import { MarketData } from "../../src/market/MarketData.js"
import { findFactor } from "../../src/ranking/FactorCatalogue.js"
import { factorValue, tableBars } from "../../src/ranking/FactorTable.js"
import { spearman } from "../../src/ranking/InformationCoefficient.js"
import { FactorParams, TableParams } from "../../src/ranking/Ranking.js"
import { effectivenessBars, Rankings } from "../../src/ranking/Rankings.js"
import type { MarketSample } from "../../src/signals/MarketSample.js"
import { SignalEngine } from "../../src/signals/SignalEngine.js"
import * as PgliteClient from "../../src/sql/PgliteClient.js"
import { makeSimulatedVenue } from "../../src/venues/SimulatedVenue.js"
import { timeframeMillis, type Venue, Venues } from "../../src/venues/Venue.js"

const now = Date.parse("2026-03-01T12:34:56.000Z")

/** Calls into the venue, by method; `failTickers` makes the next tickers calls fail. */
const calls = new Map<string, number>()
let failTickers = 0
const bump = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1)

/** The simulated venue, counting the calls the ranking makes. */
const counting = (venue: Venue): Venue => ({
  ...venue,
  tickers: Effect.suspend(() => {
    bump("tickers")
    return failTickers-- > 0 ? Effect.fail(new UpstreamError({ error: "venue down" })) : venue.tickers
  }),
  candles: (query) => Effect.suspend(() => (bump("candles"), venue.candles(query))),
  trades: (symbol, limit) => Effect.suspend(() => (bump("trades"), venue.trades(symbol, limit))),
  depth: (symbol, levels) => Effect.suspend(() => (bump("depth"), venue.depth(symbol, levels)))
})

/** The signal engine's open interest samples: BTC's rose from 100 to 110 coins, ETH has one sample. */
const oiSamples: Record<string, ReadonlyArray<number>> = { BTC: [100, 104, 110], ETH: [50] }
const samplesAsked: Array<[string, string, number | undefined]> = []
const samples: SignalEngine["Type"]["samples"] = (exchange, symbol, since) =>
  Effect.sync(() => {
    samplesAsked.push([exchange, symbol, since])
    return (oiSamples[symbol] ?? []).map((open_interest, i) =>
      ({ exchange, symbol, open_interest, sampled_at: (since ?? 0) + i }) as unknown as MarketSample
    )
  })
// The ranking reads only the samples.
const SignalEngineTest = Layer.succeed(SignalEngine, { samples } as unknown as SignalEngine["Type"])

const cacheTtl = Duration.seconds(30)
const RankingsTest = Rankings.Default.pipe(
  // The simulated venues' candles are computed, never stored: the store is there but stays empty.
  Layer.provide(MarketData.Default),
  Layer.provideMerge(Layer.effect(
    Venues,
    Effect.all({
      venue1: Effect.map(makeSimulatedVenue("venue1", 42), counting),
      venue2: makeSimulatedVenue("venue2", 42)
    })
  )),
  Layer.provide(SignalEngineTest),
  Layer.provide(PgliteClient.layer("memory://")),
  Layer.provide(PlatformConfig.layer(platformOptions({ ranking: { cacheTtl } })))
)

const params = (query: Record<string, string>) => Schema.decodeUnknownSync(TableParams)(query)
const reset = Effect.sync(() => {
  calls.clear()
  failTickers = 0
})

describe("the Rankings service", () => {
  it.layer(RankingsTest, { timeout: "120 seconds" })((it) => {
    it.effect("computes a table once under 20 concurrent requests, and again once the cache time has passed", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        yield* reset
        const rankings = yield* Rankings
        const query = params({ timeframe: "1m", factors: "rsi_14,depth_imbalance,taker_buy_ratio", limit: "5" })
        const tables = yield* Effect.all(Array.from({ length: 20 }, () => rankings.table(query)), {
          concurrency: "unbounded"
        })
        // 24 listed symbols: one tickers call, then candles, trades and depth once per symbol.
        expect(Object.fromEntries(calls)).toEqual({ tickers: 1, candles: 24, trades: 24, depth: 24 })
        for (const t of tables) expect(t).toEqual(tables[0])
        expect(tables[0]!.rows.length).toBe(5)
        // The same choice in another order, with another limit, is the same entry.
        const reordered = yield* rankings.table(
          params({ timeframe: "1m", factors: "taker_buy_ratio,1,depth_imbalance", limit: "50" })
        )
        expect(reordered.rows.slice(0, 5)).toEqual(tables[0]!.rows)
        expect(reordered.rows.length).toBe(24)
        expect(calls.get("tickers")).toBe(1)
        yield* TestClock.adjust(Duration.sum(cacheTtl, Duration.seconds(1)))
        const later = yield* rankings.table(query)
        expect(calls.get("tickers")).toBe(2)
        expect(later.computed_at).toBe(new Date(now + 31_000).toISOString())
      }))

    it.effect("reads only the data the chosen factors need, and a different weight is a different entry", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        yield* reset
        const rankings = yield* Rankings
        yield* rankings.table(params({ timeframe: "5m", factors: "funding_rate" }))
        expect(Object.fromEntries(calls)).toEqual({ tickers: 1 })
        yield* rankings.table(params({ timeframe: "5m", factors: "funding_rate", weights: "funding_rate:2" }))
        expect(Object.fromEntries(calls)).toEqual({ tickers: 2 })
      }))

    it.effect("reads the open interest change from the signal engine's samples over the timeframe's last bar", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        samplesAsked.length = 0
        const rankings = yield* Rankings
        const table = yield* rankings.table(params({ timeframe: "15m", factors: "oi_change,roc_10" }))
        const row = (symbol: string) => table.rows.find((r) => r.symbol === symbol)!
        expect(row("BTC").factors.oi_change).toBeCloseTo(10, 12)
        expect(row("BTC").missing).toEqual([])
        // Alone with a value, BTC's change cannot be told apart from anyone's: it scores 0.
        expect(row("BTC").normalized.oi_change).toBe(0)
        expect(row("ETH").factors.oi_change).toBeNull()
        expect(row("ETH").missing).toEqual(["oi_change"])
        expect(samplesAsked.length).toBe(24)
        expect(samplesAsked[0]).toEqual(["venue1", expect.any(String), now - 15 * 60_000])
      }))

    it.effect("does not keep a venue failure: the next request computes again", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        yield* reset
        failTickers = 1
        const rankings = yield* Rankings
        const query = params({ timeframe: "1m", factors: "funding_rate,roc_10" })
        const failed = yield* Effect.flip(rankings.table(query))
        expect(failed).toBeInstanceOf(UpstreamError)
        const table = yield* rankings.table(query)
        expect(table.rows.length).toBe(24)
        expect(calls.get("tickers")).toBe(2)
      }))

    it.effect("measures a candle factor's information coefficient bar by bar, as Spearman's correlation with the forward return", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        yield* reset
        const rankings = yield* Rankings
        const horizon = 3
        const result = yield* rankings.factorEffectiveness(
          "roc_10",
          Schema.decodeUnknownSync(FactorParams)({ timeframe: "1m", horizon: "3" })
        )
        const { ic } = result
        expect(result.factor.key).toBe("roc_10")
        expect(ic.bars).toBe(effectivenessBars)
        expect(ic.series.length).toBe(effectivenessBars)
        const values = ic.series.map((p) => p.ic)
        const mean = values.reduce((a, b) => a + b, 0) / values.length
        const sd = Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / (values.length - 1))
        expect(ic.mean).toBeCloseTo(mean, 12)
        expect(ic.t_stat).toBeCloseTo(mean / (sd / Math.sqrt(values.length)), 9)
        expect(ic.hit_rate).toBeCloseTo(values.filter((v) => v > 0).length / values.length, 12)
        // The last point, worked out again from the venue's candles.
        const venue = (yield* Venues).venue1
        const step = timeframeMillis["1m"]
        const end = Math.floor(now / step) * step
        const factor = findFactor("roc_10")!
        const lastTime = Date.parse(ic.series.at(-1)!.time)
        expect(lastTime).toBe(end - (horizon + 1) * step)
        const xs: Array<number> = [], ys: Array<number> = []
        for (const symbol of (yield* venue.tickers).keys()) {
          const candles = yield* venue.candles({
            symbol,
            timeframe: "1m",
            start: lastTime - (tableBars - 1) * step,
            end: lastTime + (horizon + 1) * step
          })
          const window = candles.slice(0, tableBars)
          xs.push(factorValue(factor, { symbol, candles: window, market: {} })!)
          ys.push(candles.at(-1)!.close / window.at(-1)!.close - 1)
        }
        expect(ic.series.at(-1)!.ic).toBeCloseTo(spearman(xs, ys)!, 12)
      }))

    it.effect("answers not found for an unknown factor and no history for a microstructure one", () =>
      Effect.gen(function*() {
        const rankings = yield* Rankings
        const defaults = Schema.decodeUnknownSync(FactorParams)({})
        expect((yield* Effect.flip(rankings.factorEffectiveness("nope", defaults)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(rankings.factorEffectiveness("funding_rate", defaults)))._tag).toBe(
          "NoFactorHistory"
        )
      }))
  })
})
