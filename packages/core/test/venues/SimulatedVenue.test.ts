import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { defaultMarginTables } from "../../src/venues/MarginTiers.js"
import { universe } from "../../src/venues/SimulatedMarket.js"
import { makeSimulatedVenue, paperFeeRate, paperSlippage, paperStartingCash } from "../../src/venues/SimulatedVenue.js"
import { type Candle, type Timeframe, timeframeMillis } from "../../src/venues/Venue.js"

const now = Date.parse("2026-03-01T12:34:56.789Z")
const day = 86_400_000
const wallet = {
  kind: "wallet",
  environment: "paper",
  address: `0x${"ab".repeat(20)}`,
  privateKey: `0x${"cd".repeat(32)}`
} as const

const aggregate = (bars: ReadonlyArray<Candle>) => ({
  open: bars[0]!.open,
  close: bars.at(-1)!.close,
  high: Math.max(...bars.map((b) => b.high)),
  low: Math.min(...bars.map((b) => b.low)),
  volume: bars.reduce((sum, b) => sum + b.volume, 0)
})

describe("SimulatedVenue", () => {
  it.effect("lists at least 20 symbols with positive prices, funding and 24h figures", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue1", 42)
      const tickers = yield* venue.tickers
      expect(tickers.size).toBeGreaterThanOrEqual(20)
      for (const symbol of ["BTC", "ETH", "SOL"]) {
        const t = tickers.get(symbol)!
        expect(t.price).toBeGreaterThan(0)
        expect(t.volume_24h).toBeGreaterThan(0)
        expect(Math.abs(t.change_24h)).toBeLessThan(50)
        expect(Math.abs(t.funding_rate)).toBeLessThan(0.001)
      }
      const btc = tickers.get("BTC")!.price
      expect(btc).toBeGreaterThan(20_000)
      expect(btc).toBeLessThan(200_000)
    }))

  it.effect("the same seed answers the same candles on every request and in a new instance; another seed differs", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const query = { symbol: "ETH", timeframe: "1h", start: now - 3 * day, end: now } as const
      const first = yield* (yield* makeSimulatedVenue("venue1", 42)).candles(query)
      const again = yield* (yield* makeSimulatedVenue("venue1", 42)).candles(query)
      const other = yield* (yield* makeSimulatedVenue("venue1", 7)).candles(query)
      // 13:00 three days ago up to 11:00 today, the last hour that has closed at 12:34.
      expect(first.length).toBe(71)
      expect(again).toEqual(first)
      expect(other).not.toEqual(first)
      // Moving time on closes one more bar and changes none of the closed ones.
      yield* TestClock.adjust("5 hours")
      const later = yield* (yield* makeSimulatedVenue("venue1", 42)).candles(query)
      expect(later.length).toBe(72)
      expect(later.slice(0, 71)).toEqual(first)
    }))

  it.effect("every coarser timeframe aggregates the finer candles exactly", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue2", 42)
      const start = Math.floor((now - 2 * day) / day) * day
      const bars = (timeframe: Timeframe) => venue.candles({ symbol: "SOL", timeframe, start, end: start + day })
      const pairs: ReadonlyArray<[Timeframe, Timeframe]> = [
        ["1m", "5m"],
        ["5m", "15m"],
        ["15m", "30m"],
        ["30m", "1h"],
        [
          "1h",
          "4h"
        ],
        ["4h", "1d"]
      ]
      for (const [fine, coarse] of pairs) {
        const fineBars = yield* bars(fine)
        const coarseBars = yield* bars(coarse)
        expect(coarseBars.length).toBe(day / timeframeMillis[coarse])
        const ratio = timeframeMillis[coarse] / timeframeMillis[fine]
        coarseBars.forEach((bar, i) => {
          const parts = aggregate(fineBars.slice(i * ratio, (i + 1) * ratio))
          expect(bar.open).toBe(parts.open)
          expect(bar.close).toBe(parts.close)
          expect(bar.high).toBeCloseTo(parts.high, 6)
          expect(bar.low).toBeCloseTo(parts.low, 6)
          expect(bar.volume / parts.volume).toBeCloseTo(1, 6)
          expect(bar.high).toBeGreaterThanOrEqual(Math.max(bar.open, bar.close))
          expect(bar.low).toBeLessThanOrEqual(Math.min(bar.open, bar.close))
        })
      }
    }))

  it.effect("daily candles reach back more than a year, and only closed candles are answered", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue1", 42)
      const year = yield* venue.candles({ symbol: "BTC", timeframe: "1d", start: now - 400 * day, end: now + day })
      // From the first midnight after the start up to yesterday: today's bar is still open.
      expect(year.length).toBe(399)
      expect(year.at(-1)!.time + day).toBeLessThanOrEqual(now)
      const recent = yield* venue.candles({
        symbol: "BTC",
        timeframe: "1m",
        start: now - 10 * 60_000,
        end: now + 60_000
      })
      expect(recent.at(-1)!.time).toBe(Math.floor(now / 60_000) * 60_000 - 60_000)
    }))

  it.effect("depth, trades, funding and open interest answer plausible, deterministic data", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue1", 42)
      const book = yield* venue.depth("BTC", 10)
      expect(book.bids.length).toBe(10)
      expect(book.bids[0]![0]).toBeLessThan(book.asks[0]![0])
      expect(book.bids[1]![0]).toBeLessThan(book.bids[0]![0])
      const trades = yield* venue.trades("BTC", 50)
      expect(trades.length).toBe(50)
      expect(trades[0]!.time).toBeGreaterThan(trades[49]!.time)
      expect(yield* venue.trades("BTC", 50)).toEqual(trades)
      const funding = yield* venue.funding("BTC")
      expect(funding.next_funding_time).toBeGreaterThan(now)
      expect(yield* venue.openInterest("BTC")).toBeGreaterThan(0)
      const unknown = yield* Effect.flip(venue.depth("NOPE", 5))
      expect(unknown).toMatchObject({ _tag: "UnknownSymbol", symbol: "NOPE" })
    }))

  it.effect("paper orders fill at the price plus slippage, pay the fee, and realize PnL on close", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue2", 42)
      const price = (yield* venue.tickers).get("ETH")!.price
      const buy = yield* venue.placeOrder(wallet, { symbol: "ETH", side: "buy", quantity: 2 })
      expect(buy.status).toBe("filled")
      expect(buy.average_price! / price).toBeCloseTo(1 + paperSlippage, 6)
      expect(buy.fee).toBeCloseTo(2 * buy.average_price! * paperFeeRate, 8)
      expect(yield* venue.positions(wallet)).toEqual([
        { symbol: "ETH", side: "long", size: 2, entry_price: buy.average_price, leverage: 1 }
      ])
      const sell = yield* venue.placeOrder(wallet, { symbol: "ETH", side: "sell", quantity: 2 })
      expect(yield* venue.positions(wallet)).toEqual([])
      const [usd] = yield* venue.balances(wallet)
      const expected = paperStartingCash + 2 * (sell.average_price! - buy.average_price!) - buy.fee! - sell.fee!
      expect(usd!.total).toBeCloseTo(expected, 8)
      expect(usd!.total).toBeLessThan(paperStartingCash)
    }))

  it.effect("states each symbol's rules: a lot worth 1 to 10 USD, the venue's minimum notional, the configured brackets", () =>
    Effect.gen(function*() {
      const one = yield* (yield* makeSimulatedVenue("venue1", 42)).symbols
      expect(one.find((s) => s.symbol === "BTC")).toEqual({
        symbol: "BTC",
        tick_size: 0.1,
        lot_size: 0.0001,
        min_quantity: 0.0001,
        min_notional: 10,
        max_leverage: 50,
        margin: defaultMarginTables.venue1
      })
      for (const s of one) {
        const reference = universe[s.symbol]!
        expect(s.lot_size * reference).toBeGreaterThanOrEqual(1)
        expect(s.lot_size * reference).toBeLessThan(10)
      }
      const own = {
        tiers: [{ notional_floor: 0, max_leverage: 20, maintenance_rate: 0.025 }],
        liquidation_fee_rate: 0.01
      }
      const two = yield* (yield* makeSimulatedVenue("venue2", 42, undefined, own)).symbols
      expect(two.find((s) => s.symbol === "DOGE")).toMatchObject({
        lot_size: 10,
        min_notional: 5,
        max_leverage: 20,
        margin: own
      })
    }))

  it.effect("refuses, as a real venue does, a quantity off the symbol's lot or below its minimum", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue2", 42)
      const off = yield* Effect.flip(
        venue.placeOrder(wallet, { symbol: "ETH", side: "buy", quantity: 0.3917585066974925 })
      )
      expect(off).toMatchObject({
        _tag: "VenueRejected",
        error: "venue2 refuses a quantity of 0.391758506697493 ETH: it must be a multiple of 0.001 and at least 0.001"
      })
      expect(yield* Effect.flip(venue.placeOrder(wallet, { symbol: "ETH", side: "buy", quantity: 0 }))).toMatchObject({
        _tag: "VenueRejected"
      })
      expect(yield* venue.placeOrder(wallet, { symbol: "ETH", side: "buy", quantity: 0.391 })).toMatchObject({
        status: "filled",
        filled_quantity: 0.391
      })
    }))

  it.effect("a limit order away from the market rests until cancelled; bad credentials are rejected", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const venue = yield* makeSimulatedVenue("venue1", 42)
      const resting = yield* venue.placeOrder(wallet, { symbol: "BTC", side: "buy", quantity: 1, price: 1 })
      expect(resting).toMatchObject({ status: "open", filled_quantity: 0 })
      yield* venue.cancelOrder(wallet, { symbol: "BTC", order_id: resting.order_id })
      const again = yield* Effect.flip(venue.cancelOrder(wallet, { symbol: "BTC", order_id: resting.order_id }))
      expect(again._tag).toBe("VenueRejected")
      const bad = yield* Effect.flip(venue.checkCredentials({ ...wallet, privateKey: "0x12" }))
      expect(bad._tag).toBe("VenueRejected")
      yield* venue.checkCredentials(wallet)
    }))
})
