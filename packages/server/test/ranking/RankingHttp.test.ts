import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { PlatformLive, SignalEngine } from "@trading-platform/core"
import { TestConfig, testStorages } from "@trading-platform/core/testing"
import { ApiLive, requestContext } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import { createServer } from "node:http"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const now = Date.parse("2026-03-01T12:34:56.000Z")

/** A user at a fixed moment of the simulated market. */
const trader = Effect.zipRight(TestClock.setTime(now), signUp("ranker"))

describe("ranking over HTTP", () => {
  layer(TestServer({ storage: testStorages[0]! }), { timeout: "120 seconds" })((it) => {
    it.effect("GET /api/ranking/factors lists the built-in factors of the five categories", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("GET", "/api/ranking/factors", { token })
        expect(reply.status).toBe(200)
        const factors = reply.body.factors as Array<any>
        expect(factors.length).toBeGreaterThanOrEqual(24)
        expect(new Set(factors.map((f) => f.category))).toEqual(
          new Set(["momentum", "trend", "volatility", "volume", "microstructure"])
        )
        expect(factors[0]).toEqual({
          id: 1,
          key: "rsi_14",
          name: "RSI 14",
          category: "momentum",
          description: "Wilder's relative strength index over 14 bars, 0 to 100",
          source: "builtin",
          higher_is: "better",
          ta: "ta.rsi(data.candles, 14)"
        })
        expect(factors.find((f) => f.key === "funding_rate")).toMatchObject({
          higher_is: "worse",
          ta: null,
          category: "microstructure"
        })
      }))

    it.effect("GET /api/ranking/table ranks every listed symbol on every factor by default", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("GET", "/api/ranking/table?timeframe=5m", { token })
        expect(reply.status).toBe(200)
        const { computed_at, errors, exchange, rows, timeframe, weights } = reply.body
        expect({ computed_at, exchange, timeframe, errors }).toEqual({
          computed_at: new Date(now).toISOString(),
          exchange: "venue1",
          timeframe: "5m",
          errors: {}
        })
        expect(Object.keys(weights).length).toBe(25)
        expect(rows.length).toBe(24)
        expect(rows.map((r: any) => r.rank)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1))
        for (let i = 1; i < rows.length; i++) expect(rows[i - 1].score).toBeGreaterThanOrEqual(rows[i].score)
        const top = rows[0]
        expect(Object.keys(top.factors).length).toBe(25)
        // Open interest change needs the signal engine's samples, taken only for symbols of enabled pools: none here.
        expect(top.missing).toEqual(["oi_change"])
        expect(top.factors.oi_change).toBeNull()
        // The score is the mean of the normalised values, each within ±3.
        const zs = Object.values(top.normalized) as Array<number>
        expect(zs.length).toBe(24)
        for (const z of zs) expect(Math.abs(z)).toBeLessThanOrEqual(3)
        expect(top.score).toBeCloseTo(zs.reduce((a, b) => a + b, 0) / zs.length, 12)
      }))

    it.effect("GET /api/ranking/table takes factors by key or id, weights and a limit", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call(
          "GET",
          "/api/ranking/table?factors=roc_10,13&weights=roc_10:3&timeframe=1m&limit=3&exchange=venue2",
          { token }
        )
        expect(reply.status).toBe(200)
        expect(reply.body.exchange).toBe("venue2")
        expect(reply.body.weights).toEqual({ roc_10: 3, atr_pct_14: 1 })
        expect(reply.body.rows.length).toBe(3)
        const top = reply.body.rows[0]
        expect(Object.keys(top.factors)).toEqual(["roc_10", "atr_pct_14"])
        expect(top.score).toBeCloseTo((3 * top.normalized.roc_10 + top.normalized.atr_pct_14) / 4, 12)
      }))

    it.effect("GET /api/ranking/table with an unknown factor, timeframe or bad weight answers 400 naming it", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const unknown = yield* call("GET", "/api/ranking/table?factors=rsi_14,magic", { token })
        expectError(unknown, 400, "invalid_input")
        // One sentence, without the optional parameter's "must be undefined".
        expect(unknown.body.issues).toEqual([{ path: "factors.1", message: "unknown factor \"magic\"" }])
        expect(unknown.body.error).toBe("Invalid request: factors.1 unknown factor \"magic\"")
        const timeframe = yield* call("GET", "/api/ranking/table?timeframe=2h", { token })
        expectError(timeframe, 400, "invalid_input")
        expect(JSON.stringify(timeframe.body.issues)).toContain("2h")
        const stray = yield* call("GET", "/api/ranking/table?factors=rsi_14&weights=roc_10:2", { token })
        expectError(stray, 400, "invalid_input")
        expect(JSON.stringify(stray.body.issues)).toContain("roc_10")
        for (const weights of ["rsi_14:-1", "rsi_14:x", "rsi_14", "rsi_14:"]) {
          const bad = yield* call("GET", `/api/ranking/table?weights=${weights}`, { token })
          expectError(bad, 400, "invalid_input")
          expect(JSON.stringify(bad.body.issues)).toContain(weights)
        }
        expectError(
          yield* call("GET", "/api/ranking/table?factors=rsi_14&weights=rsi_14:0", { token }),
          400,
          "invalid_input"
        )
        expectError(yield* call("GET", "/api/ranking/table?factors=", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/ranking/table?limit=0", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/ranking/table?exchange=venue9", { token }), 400, "invalid_input")
      }))

    it.effect("GET /api/ranking/factors/{id} answers the factor with its information coefficient", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const reply = yield* call("GET", "/api/ranking/factors/rsi_7?timeframe=1m&horizon=5", { token })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({
          factor: { id: 2, key: "rsi_7" },
          exchange: "venue1",
          timeframe: "1m",
          horizon: 5
        })
        const { ic } = reply.body
        expect(ic.bars).toBe(200)
        expect(ic.series.length).toBe(200)
        expect(Math.abs(ic.mean)).toBeLessThanOrEqual(1)
        expect(ic.hit_rate).toBeGreaterThanOrEqual(0)
        expect(ic.hit_rate).toBeLessThanOrEqual(1)
        expect(typeof ic.t_stat).toBe("number")
        const byId = yield* call("GET", "/api/ranking/factors/2?timeframe=1m&horizon=5", { token })
        expect(byId.body).toEqual(reply.body)
      }))

    it.effect("GET /api/ranking/factors/{id}: unknown 404, microstructure 422, bad horizon 400", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        expectError(yield* call("GET", "/api/ranking/factors/nope", { token }), 404, "not_found")
        expectError(yield* call("GET", "/api/ranking/factors/99", { token }), 404, "not_found")
        expectError(yield* call("GET", "/api/ranking/factors/depth_imbalance", { token }), 422, "no_factor_history")
        expectError(yield* call("GET", "/api/ranking/factors/rsi_14?horizon=0", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/ranking/factors/rsi_14?horizon=101", { token }), 400, "invalid_input")
        expectError(yield* call("GET", "/api/ranking/factors/rsi_14?timeframe=3m", { token }), 400, "invalid_input")
      }))

    it.effect("ranking endpoints without a valid token answer 401", () =>
      Effect.gen(function*() {
        expectError(yield* call("GET", "/api/ranking/factors"), 401, "unauthorized")
        expectError(yield* call("GET", "/api/ranking/table"), 401, "unauthorized")
        expectError(yield* call("GET", "/api/ranking/factors/rsi_14"), 401, "unauthorized")
        expectError(yield* call("GET", "/api/ranking/table", { token: "not-a-token" }), 401, "unauthorized")
      }))

    it.effect("concurrent table requests with different limits answer slices of one table", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const replies = yield* Effect.all(
          Array.from(
            { length: 20 },
            (_, i) =>
              call("GET", `/api/ranking/table?factors=mfi_14,vwap_deviation_20&timeframe=15m&limit=${i + 1}`, { token })
          ),
          { concurrency: "unbounded" }
        )
        for (const [i, reply] of replies.entries()) {
          expect(reply.status).toBe(200)
          expect(reply.body.rows).toEqual(replies[19]!.body.rows.slice(0, i + 1))
        }
      }))
  })
})

/** The real server with the platform's services in reach, so a test can run the signal engine's rounds. */
const ServerWithEngine = HttpApiBuilder.serve(requestContext).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(ApiLive),
  Layer.provideMerge(PlatformLive),
  Layer.provideMerge(TestConfig(testStorages[0]!))
)

describe("ranking with the signal engine's samples", () => {
  layer(ServerWithEngine, { timeout: "120 seconds" })((it) => {
    it.effect("oi_change is the open interest change the engine sampled for the pools' symbols over the timeframe's last bar", () =>
      Effect.gen(function*() {
        const { token } = yield* trader
        const signal = yield* call("POST", "/api/signals", {
          token,
          body: {
            signal_name: "any trading",
            trigger_condition: { metric: "volume", operator: "gt", threshold: 0, time_window: "1m" }
          }
        })
        expect(signal.status).toBe(201)
        const pool = yield* call("POST", "/api/signals/pools", {
          token,
          body: { pool_name: "majors", symbols: ["BTC", "ETH"], logic: "OR", signal_ids: [signal.body.id] }
        })
        expect(pool.status).toBe(201)
        const engine = yield* SignalEngine
        for (let round = 0; round < 4; round++) {
          yield* TestClock.adjust(Duration.minutes(5))
          yield* engine.evaluateNow
        }
        const reply = yield* call("GET", "/api/ranking/table?factors=oi_change,roc_10&timeframe=1h", { token })
        expect(reply.status).toBe(200)
        const row = (symbol: string) => reply.body.rows.find((r: any) => r.symbol === symbol)
        const samples = yield* engine.samples("venue1", "BTC", now + 20 * 60_000 - 3_600_000)
        expect(samples.length).toBe(4)
        const first = samples[0]!.open_interest, last = samples[3]!.open_interest
        expect(first).not.toBe(last)
        expect(row("BTC").factors.oi_change).toBeCloseTo((last - first) * 100 / first, 12)
        expect(row("ETH").factors.oi_change).toEqual(expect.any(Number))
        expect(row("SOL").factors.oi_change).toBeNull()
        expect(row("SOL").missing).toEqual(["oi_change"])
      }))
  })
})
