import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { resample } from "../../src/market/Bars.js"
import { MarketData, venuePageBars } from "../../src/market/MarketData.js"
import { DatabaseLive } from "../../src/sql/Database.js"
import { type Candle, timeframeMillis, Venues } from "../../src/venues/Venue.js"
import { VenuesLive } from "../../src/venues/VenuesLive.js"
import { fakeQuietHours, startFakeVenue2 } from "../support/FakeVenues.js"
import { TestConfig, testOptions, testStorages } from "../support/TestStorage.js"

const fake = await startFakeVenue2()
afterAll(() => fake.close())

const minute = 60_000
const hour = 3_600_000
const day = Date.parse("2026-02-10T00:00:00Z")
const now = day + 2 * 86_400_000 + 30 * minute
const venue2 = { _tag: "Venue", exchange: "venue2" } as const

const klineCalls = () => fake.calls.get("/fapi/v1/klines") ?? 0
/** Venue calls the effect makes. */
const callsOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = klineCalls()
    const value = yield* self
    return { value, calls: klineCalls() - before }
  })

const { venues } = testOptions({ kind: "pglite", dataDir: "memory://" })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`MarketData over the candle store on ${storage.name}`, () => {
    const config = TestConfig(storage, {
      venues: { ...venues, venue2: { mode: "http", baseUrl: fake.url, timeout: Duration.seconds(5), retries: 0 } }
    })
    const MarketDataTest = MarketData.Default.pipe(
      Layer.provideMerge(VenuesLive),
      Layer.provideMerge(DatabaseLive),
      Layer.provide(config)
    )

    layer(MarketDataTest, { timeout: "120 seconds" })((it) => {
      it.effect("a range is fetched from the venue once: read again, it comes from the store, bar for bar", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(now)
          const market = yield* MarketData
          const query = { symbol: "BTC", timeframe: "1h", start: day, end: day + 86_400_000 } as const
          const first = yield* callsOf(market.candles(venue2, query))
          expect(first.calls).toBeGreaterThan(0)
          // The quiet hours have no bars; every other hour of the day has one.
          expect(first.value.length).toBe(24 - (fakeQuietHours.to - fakeQuietHours.from) / hour)
          const again = yield* callsOf(market.candles(venue2, query))
          expect(again.calls).toBe(0)
          expect(again.value).toEqual(first.value)
          // A part of it, and a span that overlaps it, ask only for what is new.
          const part = yield* callsOf(market.candles(venue2, { ...query, start: day + 2 * hour, end: day + 10 * hour }))
          expect(part.calls).toBe(0)
          expect(part.value.map((b) => b.time)).toEqual(
            first.value.filter((b) => b.time >= day + 2 * hour && b.time < day + 10 * hour).map((b) => b.time)
          )
          const wider = yield* callsOf(market.candles(venue2, { ...query, end: day + 30 * hour }))
          expect(wider.calls).toBe(1)
          expect(wider.value.slice(0, first.value.length)).toEqual(first.value)
          expect(wider.value.length).toBe(first.value.length + 6)
        }))

      it.effect("a span the venue had no bars for is covered too, and not asked again", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(now)
          const market = yield* MarketData
          const quiet = { symbol: "ETH", timeframe: "15m", start: fakeQuietHours.from, end: fakeQuietHours.to } as const
          const first = yield* callsOf(market.candles(venue2, quiet))
          expect(first.value).toEqual([])
          expect(first.calls).toBe(1)
          expect((yield* callsOf(market.candles(venue2, quiet))).calls).toBe(0)
        }))

      it.effect("coarser bars are built from covered finer ones at the venue's boundaries, equal to the venue's own", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(now)
          const market = yield* MarketData
          const span = { symbol: "ETH", start: day, end: day + 86_400_000 } as const
          const minutes = yield* market.candles(venue2, { ...span, timeframe: "1m" })
          // 1440 minutes less the quiet hours, fetched a page of `venuePageBars` at a time.
          expect(minutes.length).toBe(1440 - (fakeQuietHours.to - fakeQuietHours.from) / minute)
          expect(minutes.length).toBeGreaterThan(venuePageBars)
          for (const timeframe of ["5m", "15m", "30m", "1h", "4h", "1d"] as const) {
            const built = yield* callsOf(market.candles(venue2, { ...span, timeframe }))
            expect(built.calls).toBe(0)
            const own: ReadonlyArray<Candle> = yield* (yield* Venues).venue2.candles({ ...span, timeframe })
            expect(built.value).toEqual(own)
            expect(built.value).toEqual(resample(minutes, timeframe))
          }
        }))

      it.effect("only closed bars are read; once time moves on, the newly closed ones are fetched and nothing else", () =>
        Effect.gen(function*() {
          const start = day + 86_400_000
          yield* TestClock.setTime(start + 3 * hour + 20 * minute)
          const market = yield* MarketData
          // 30m bars: no other test here reads them, so nothing of this day is stored yet.
          const step = timeframeMillis["30m"]
          const query = { symbol: "BTC", timeframe: "30m", start, end: start + 86_400_000 } as const
          const early = yield* market.candles(venue2, query)
          expect(early.map((b) => (b.time - start) / step)).toEqual([0, 1, 2, 3, 4, 5])
          yield* TestClock.adjust(Duration.hours(2))
          const later = yield* callsOf(market.candles(venue2, query))
          expect(later.calls).toBe(1)
          expect(later.value.map((b) => (b.time - start) / step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
          expect(later.value.slice(0, 6)).toEqual(early)
          const latest = yield* callsOf(market.latest(venue2, "BTC", "30m", 2))
          expect(latest.calls).toBe(0)
          expect(latest.value.map((b) => (b.time - start) / step)).toEqual([8, 9])
        }))

      it.effect("funding payments are fetched once into the store, only those already paid, and paged past the venue's cap", () =>
        Effect.gen(function*() {
          const start = day + 86_400_000
          yield* TestClock.setTime(start + 3 * 86_400_000 + 1)
          const market = yield* MarketData
          const fundingCalls = () => fake.calls.get("/fapi/v1/fundingRate") ?? 0
          fake.klinesCap = 4
          const before = fundingCalls()
          // Ten days asked, three passed: ten payments (the last at this instant), one every eight hours.
          const first = yield* market.fundingRates(venue2, { symbol: "BTC", start, end: start + 10 * 86_400_000 })
          fake.klinesCap = Infinity
          expect(first.map((f) => (f.time - start) / (8 * hour))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
          expect(first[0]!.rate).toBeCloseTo(0.0001 * (1 + (start / (8 * hour)) % 3), 12)
          // Pages of 4, 4 and 2, and an empty one that says there is no more.
          expect(fundingCalls() - before).toBe(4)
          const again = yield* market.fundingRates(venue2, { symbol: "BTC", start, end: start + 3 * 86_400_000 })
          expect(again).toEqual(first.slice(0, 9))
          expect(fundingCalls() - before).toBe(4)
        }))

      it.effect("a simulated venue's payments are the rates it announced for each period", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(now)
          const market = yield* MarketData
          const simulated = { _tag: "Venue", exchange: "venue1" } as const
          const paid = yield* market.fundingRates(simulated, {
            symbol: "ETH",
            start: now - 86_400_000,
            end: now + 86_400_000
          })
          expect(paid.length).toBe(3)
          const venue = (yield* Venues).venue1
          for (const payment of paid) {
            yield* TestClock.setTime(payment.time - 1)
            const announced = yield* venue.funding("ETH")
            expect(announced).toEqual({ rate: payment.rate, next_funding_time: payment.time })
          }
        }))
    })
  })
}
