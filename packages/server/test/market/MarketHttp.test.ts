import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const now = Date.parse("2026-03-01T12:34:56.000Z")
const hour = 3_600_000

/** A user at a fixed moment of the simulated market. */
const trader = Effect.zipRight(TestClock.setTime(now), signUp("trader"))

describe("market data over the simulated venues", () => {
  layer(TestServer({ storage: testStorages[0]! }), { timeout: "120 seconds" })((it) => {
    it.effect("POST /api/market/prices answers each listed symbol and reports unknown ones in errors", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("POST", "/api/market/prices", { token, body: { symbols: ["BTC", "eth", "NOPE"] } })
        expect(reply.status).toBe(200)
        expect(reply.body.exchange).toBe("venue1")
        expect(reply.body.timestamp).toBe(new Date(now).toISOString())
        expect(Object.keys(reply.body.prices).sort()).toEqual(["BTC", "ETH"])
        expect(Object.keys(reply.body.prices.BTC).sort()).toEqual([
          "change_24h",
          "funding_rate",
          "open_interest",
          "price",
          "volume_24h"
        ])
        expect(reply.body.prices.BTC.price).toBeGreaterThan(reply.body.prices.ETH.price)
        expect(reply.body.errors).toEqual({ NOPE: "Unknown symbol on venue1" })
        const again = yield* call("POST", "/api/market/prices", {
          token,
          body: { symbols: ["BTC"], exchange: "venue2" }
        })
        expect(again.body.exchange).toBe("venue2")
        // The venues share one market path, with a small basis between them.
        expect(Math.abs(again.body.prices.BTC.price / reply.body.prices.BTC.price - 1)).toBeLessThan(0.002)
      }))

    it.effect("GET /api/market/symbols lists the simulated universe with tick size and max leverage per venue", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const one = yield* call("GET", "/api/market/symbols", { token })
        expect(one.status).toBe(200)
        expect(one.body.exchange).toBe("venue1")
        expect(one.body.symbols.length).toBeGreaterThan(20)
        // Each symbol's rules: its tick, its lot and minimums, its cap and its venue's margin table.
        expect(one.body.symbols).toContainEqual({
          symbol: "BTC",
          tick_size: 0.1,
          lot_size: 0.0001,
          min_quantity: 0.0001,
          min_notional: 10,
          max_leverage: 50,
          margin: {
            tiers: [
              { notional_floor: 0, max_leverage: 50, maintenance_rate: 0.01 },
              { notional_floor: 150_000_000, max_leverage: 20, maintenance_rate: 0.025 }
            ],
            liquidation_fee_rate: 0
          }
        })
        expect(one.body.symbols).toContainEqual(
          expect.objectContaining({ symbol: "XRP", tick_size: 0.000001, max_leverage: 50, min_notional: 10 })
        )
        const two = yield* call("GET", "/api/market/symbols?exchange=venue2", { token })
        expect(two.body.symbols).toContainEqual(
          expect.objectContaining({ symbol: "ETH", tick_size: 0.01, max_leverage: 125, min_notional: 5 })
        )
        // Every listed symbol has prices.
        const prices = yield* call("POST", "/api/market/prices", {
          token,
          body: { symbols: one.body.symbols.slice(0, 50).map((s: { symbol: string }) => s.symbol) }
        })
        expect(prices.body.errors).toEqual({})
        const unknown = yield* call("GET", "/api/market/symbols?exchange=venue3", { token })
        expectError(unknown, 400, "invalid_input")
        expect(unknown.body.issues[0].path).toBe("exchange")
        expectError(yield* call("GET", "/api/market/symbols"), 401, "unauthorized")
      }))

    it.effect("POST /api/market/prices with more than 50 symbols, none, or a bad exchange answers 400", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const many = Array.from({ length: 51 }, (_, i) => `S${i}`)
        const tooMany = yield* call("POST", "/api/market/prices", { token, body: { symbols: many } })
        expectError(tooMany, 400, "invalid_input")
        expect(tooMany.body.error).toMatch(/50/)
        expectError(yield* call("POST", "/api/market/prices", { token, body: { symbols: [] } }), 400, "invalid_input")
        expectError(
          yield* call("POST", "/api/market/prices", { token, body: { symbols: ["BTC"], exchange: "venue9" } }),
          400,
          "invalid_input"
        )
        expectError(
          yield* call("POST", "/api/market/prices", { token, body: { symbols: ["B-T"] } }),
          400,
          "invalid_input"
        )
      }))

    it.effect("GET /api/market/klines answers the latest closed candles, the same on every request", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("GET", "/api/market/klines?symbol=sol&timeframe=1h&limit=24", { token })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({ exchange: "venue1", symbol: "SOL", timeframe: "1h" })
        const klines = reply.body.klines
        expect(klines.length).toBe(24)
        expect(klines.at(-1).time).toBe(Math.floor(now / hour) * hour - hour)
        expect(klines[1].time - klines[0].time).toBe(hour)
        // A day later (and past the cache), the same hours answer the same candles.
        yield* TestClock.adjust("1 day")
        const later = yield* call("GET", "/api/market/klines?symbol=SOL&timeframe=1h&limit=48", { token })
        expect(later.body.klines.slice(0, 24)).toEqual(klines)
      }))

    it.effect("GET /api/market/klines with an unknown symbol answers 422 symbol_not_listed, with bad parameters 400", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const unknown = yield* call("GET", "/api/market/klines?symbol=NOPE", { token })
        expectError(unknown, 422, "symbol_not_listed")
        expect(unknown.body.symbols).toEqual(["NOPE"])
        expectError(yield* call("GET", "/api/market/klines?symbol=BTC&timeframe=2h", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/market/klines?symbol=BTC&limit=1001", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/market/klines", { token }), 400, "invalid_input")
      }))

    it.effect("POST /api/programs/query-market-data answers prices, candles and indicators per symbol", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("POST", "/api/programs/query-market-data", {
          token,
          body: {
            symbols: ["ETH", "XYZ"],
            exchange: "venue2",
            timeframe: "15m",
            limit: 30,
            indicators: ["sma", "ema", "rsi"]
          }
        })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({
          exchange: "venue2",
          timeframe: "15m",
          errors: { XYZ: "Unknown symbol on venue2" }
        })
        const eth = reply.body.symbols.ETH
        expect(eth.klines.length).toBe(30)
        const closes = eth.klines.map((k: { close: number }) => k.close)
        const sma = closes.slice(-20).reduce((a: number, b: number) => a + b, 0) / 20
        expect(eth.indicators.sma).toBeCloseTo(sma, 8)
        expect(eth.indicators.rsi).toBeGreaterThanOrEqual(0)
        expect(eth.indicators.rsi).toBeLessThanOrEqual(100)
        expect(eth.price).toBeGreaterThan(0)
        expect(eth.open_interest).toBeGreaterThan(0)
        // Indicators are read over a program's window (the last 500 bars) whatever the limit, so
        // 5 candles answer the same values as 500; RSI is Wilder's, as programs' ta.rsi.
        const ask = (limit: number) =>
          Effect.map(
            call("POST", "/api/programs/query-market-data", {
              token,
              body: { symbols: ["ETH"], limit, indicators: ["sma", "rsi"] }
            }),
            (r) => r.body.symbols.ETH
          )
        const few = yield* ask(5)
        const all = yield* ask(500)
        expect(few.klines).toEqual(all.klines.slice(-5))
        expect(few.indicators).toEqual(all.indicators)
        const allCloses: Array<number> = all.klines.map((k: { close: number }) => k.close)
        let gain = 0, loss = 0
        allCloses.slice(1).forEach((c, i) => {
          const d = c - allCloses[i]!
          const [g, l] = [Math.max(d, 0), Math.max(-d, 0)]
          if (i < 14) [gain, loss] = [gain + g / 14, loss + l / 14]
          else [gain, loss] = [(gain * 13 + g) / 14, (loss * 13 + l) / 14]
        })
        expect(all.indicators.rsi).toBeCloseTo(100 - 100 / (1 + gain / loss), 8)
        expectError(
          yield* call("POST", "/api/programs/query-market-data", {
            token,
            body: { symbols: ["ETH"], indicators: ["magic"] }
          }),
          400,
          "invalid_input"
        )
      }))

    it.effect("market endpoints without a token answer 401", () =>
      Effect.gen(function*() {
        expectError(yield* call("POST", "/api/market/prices", { body: { symbols: ["BTC"] } }), 401, "unauthorized")
        expectError(yield* call("GET", "/api/market/klines?symbol=BTC"), 401, "unauthorized")
        expectError(
          yield* call("POST", "/api/programs/query-market-data", { body: { symbols: ["BTC"] } }),
          401,
          "unauthorized"
        )
      }))
  })
})
