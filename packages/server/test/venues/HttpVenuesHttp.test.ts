import { afterAll, describe, expect, layer } from "@effect/vitest"
import {
  refusedAddress,
  startFakeVenue1,
  startFakeVenue2,
  testOptions,
  testStorages,
  venue2Account
} from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount, venue2Keys, wallet } from "../support/Accounts.js"
import { makeTcpProxy } from "../support/TcpProxy.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const fake1 = await startFakeVenue1()
const fake2 = await startFakeVenue2()
afterAll(async () => {
  await fake1.close()
  await fake2.close()
})

const freshness = Duration.seconds(30)
const { venues } = testOptions({ kind: "pglite", dataDir: "memory://" })
const config = {
  venues: {
    ...venues,
    venue1: { mode: "http", baseUrl: fake1.url, timeout: Duration.seconds(1), retries: 1 },
    venue2: { mode: "http", baseUrl: fake2.url, timeout: Duration.seconds(1), retries: 1 },
    marketDataTtl: freshness
  }
} as const

/** Past the cache's freshness, so the next request asks the venue. */
const expireCache = TestClock.adjust(Duration.sum(freshness, Duration.seconds(1)))

describe("the API over the HTTP venues (local fake servers)", () => {
  layer(TestServer({ storage: testStorages[0]!, config }), { timeout: "120 seconds" })((it) => {
    it.effect("a burst of price requests for one symbol makes one upstream call per kind of data", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("burst")
        yield* expireCache
        fake2.behavior = "ok"
        fake2.calls.clear()
        const burst = Array.from(
          { length: 20 },
          () => call("POST", "/api/market/prices", { token, body: { symbols: ["BTC"], exchange: "venue2" } })
        )
        const replies = yield* Effect.all(burst, { concurrency: "unbounded" })
        for (const reply of replies) expect(reply.body.prices.BTC).toEqual(replies[0]!.body.prices.BTC)
        expect(replies[0]!.body.prices.BTC).toEqual({
          price: 65000,
          change_24h: 1.25,
          volume_24h: 123456789.12,
          funding_rate: 0.0001,
          open_interest: 81234.567
        })
        expect(Object.fromEntries(fake2.calls)).toEqual({
          "/fapi/v1/ticker/24hr": 1,
          "/fapi/v1/premiumIndex": 1,
          "/fapi/v1/openInterest": 1
        })
        // Still fresh: served from the cache.
        yield* TestClock.adjust(Duration.subtract(freshness, Duration.seconds(1)))
        yield* call("POST", "/api/market/prices", { token, body: { symbols: ["BTC"], exchange: "venue2" } })
        expect(fake2.calls.get("/fapi/v1/ticker/24hr")).toBe(1)
        yield* TestClock.adjust("2 seconds")
        yield* call("POST", "/api/market/prices", { token, body: { symbols: ["BTC"], exchange: "venue2" } })
        expect(fake2.calls.get("/fapi/v1/ticker/24hr")).toBe(2)
      }))

    it.effect("klines and query-market-data come from venue1's candleSnapshot; unknown symbols are listed in errors", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("klines")
        yield* expireCache
        fake1.behavior = "ok"
        const klines = yield* call("GET", "/api/market/klines?symbol=ETH&timeframe=1h&limit=3", { token })
        expect(klines.status).toBe(200)
        expect(klines.body.klines.length).toBe(3)
        expect(klines.body.klines[0]).toMatchObject({ high: expect.any(Number), volume: 750 })
        expectError(yield* call("GET", "/api/market/klines?symbol=DOGE", { token }), 422, "symbol_not_listed")
        const query = yield* call("POST", "/api/programs/query-market-data", {
          token,
          body: { symbols: ["BTC", "DOGE"], timeframe: "4h", limit: 2 }
        })
        expect(query.status).toBe(200)
        expect(query.body.symbols.BTC).toMatchObject({ price: 65000, open_interest: 1234.5, funding_rate: 0.0000125 })
        expect(query.body.symbols.BTC.klines.length).toBe(2)
        expect(query.body.errors).toEqual({ DOGE: "Unknown symbol on venue1" })
      }))

    it.effect("GET /api/market/symbols answers each venue's universe from its API: venue1's meta, venue2's exchangeInfo", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("symbols")
        yield* expireCache
        fake1.behavior = "ok"
        fake2.behavior = "ok"
        const one = yield* call("GET", "/api/market/symbols?exchange=venue1", { token })
        expect(one.status).toBe(200)
        expect(one.body.exchange).toBe("venue1")
        // szDecimals 5 gives lots of 0.00001 and leaves prices one decimal; maxLeverage as the venue
        // lists it; the 10 USD minimum and the default brackets.
        expect(one.body.symbols).toContainEqual({
          symbol: "BTC",
          tick_size: 0.1,
          lot_size: 0.00001,
          min_quantity: 0.00001,
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
        // ETH's 25x cap lowers its brackets.
        expect(one.body.symbols).toContainEqual(expect.objectContaining({ symbol: "ETH", max_leverage: 25 }))
        const two = yield* call("GET", "/api/market/symbols?exchange=venue2", { token })
        expect(two.status).toBe(200)
        // USDT pairs only, with their filters; the cap is the configured brackets', since per-pair brackets need keys.
        expect(two.body.symbols).toContainEqual(expect.objectContaining({
          symbol: "BTC",
          tick_size: 0.1,
          lot_size: 0.001,
          min_quantity: 0.001,
          min_notional: 5,
          max_leverage: 125
        }))
        expect(two.body.symbols.filter((s: { symbol: string }) => s.symbol === "BTC")).toHaveLength(1)
        yield* expireCache
        fake2.behavior = "error500"
        expectError(yield* call("GET", "/api/market/symbols?exchange=venue2", { token }), 502, "upstream_error")
        fake2.behavior = "ok"
      }))

    it.effect("a failing venue answers 502 upstream_error, a down one 503 unavailable, a slow one 504 upstream_timeout", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("failures")
        const prices = call("POST", "/api/market/prices", { token, body: { symbols: ["ETH"] } })
        const endpoints = [
          prices,
          call("GET", "/api/market/klines?symbol=ETH", { token }),
          call("POST", "/api/programs/query-market-data", { token, body: { symbols: ["ETH"] } })
        ]
        for (
          const [behavior, status, code] of [["error500", 502, "upstream_error"], ["garbage", 502, "upstream_error"], [
            "unavailable503",
            503,
            "unavailable"
          ], ["slow", 504, "upstream_timeout"]] as const
        ) {
          yield* expireCache
          fake1.behavior = behavior
          for (const reply of yield* Effect.all(endpoints)) {
            expectError(reply, status, code)
            expect(reply.body.error).toMatch(/venue1/)
          }
        }
        fake1.behavior = "ok"
        // Failures are not cached: the venue is asked again as soon as it recovers.
        expect((yield* prices).status).toBe(200)
      }))

    it.effect("wallet/test asks venue1 for the wallet: accepted, refused (success false) or unreachable (503)", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("wallet")
        const account = yield* createAccount(token)
        const path = `/api/venue1/accounts/${account.id}/wallet`
        fake1.behavior = "ok"
        fake1.calls.clear()
        expect((yield* call("PUT", path, { token, body: wallet })).status).toBe(200)
        const ok = yield* call("POST", `${path}/test`, { token })
        expect(ok.body).toMatchObject({ success: true, message: "venue1 accepted the wallet", model: null })
        expect(fake1.calls.get("clearinghouseState")).toBe(1)
        yield* call("PUT", path, { token, body: { ...wallet, wallet_address: refusedAddress } })
        const refused = yield* call("POST", `${path}/test`, { token })
        expect(refused.status).toBe(200)
        expect(refused.body).toMatchObject({ success: false, message: expect.stringMatching(/refused/) })
        fake1.behavior = "unavailable503"
        expectError(yield* call("POST", `${path}/test`, { token }), 503, "unavailable")
        fake1.behavior = "ok"
      }))

    it.effect("venue2 setup checks the keys with a signed call: accepted, refused 422 venue_rejected, venue failing 502", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("venue2")
        const account = yield* createAccount(token)
        const path = `/api/venue2/accounts/${account.id}/setup`
        fake2.behavior = "ok"
        expect(venue2Keys.api_key).toBe(venue2Account.apiKey)
        expect((yield* call("POST", path, { token, body: venue2Keys })).status).toBe(200)
        const refused = yield* call("POST", path, {
          token,
          body: { ...venue2Keys, secret_key: "WrongSecret0123456789" }
        })
        expectError(refused, 422, "venue_rejected")
        expect(refused.body.error).toMatch(/Signature/)
        fake2.behavior = "error500"
        expectError(yield* call("POST", path, { token, body: venue2Keys }), 502, "upstream_error")
        fake2.behavior = "ok"
      }))
  })
})

// venue1 through a proxy that the test stops, like the venue going away; venue2 direct.
const proxy1 = makeTcpProxy(new URL(fake1.url))
await proxy1.start()
afterAll(proxy1.stop)

describe("the API with a venue that goes away", () => {
  const behindProxy = { ...config.venues.venue1, baseUrl: `http://127.0.0.1:${proxy1.port()}` }
  layer(TestServer({ storage: testStorages[0]!, config: { venues: { ...config.venues, venue1: behindProxy } } }), {
    timeout: "120 seconds"
  })((it) => {
    it.effect("its market data and wallet test answer 502 upstream_error; the other venue answers as usual", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("down")
        const account = yield* createAccount(token)
        yield* call("PUT", `/api/venue1/accounts/${account.id}/wallet`, { token, body: wallet })
        fake1.behavior = "ok"
        fake2.behavior = "ok"
        const venue1Prices = call("POST", "/api/market/prices", {
          token,
          body: { symbols: ["BTC"], exchange: "venue1" }
        })
        const venue2Prices = call("POST", "/api/market/prices", {
          token,
          body: { symbols: ["BTC"], exchange: "venue2" }
        })
        expect((yield* venue1Prices).status).toBe(200)

        yield* Effect.promise(proxy1.stop)
        yield* expireCache
        const replies = yield* Effect.all([
          venue1Prices,
          call("GET", "/api/market/klines?symbol=BTC", { token }),
          call("POST", `/api/venue1/accounts/${account.id}/wallet/test`, { token })
        ])
        for (const reply of replies) {
          expectError(reply, 502, "upstream_error")
          expect(reply.body.error).toMatch(/venue1 cannot be reached/)
        }
        expect((yield* venue2Prices).status).toBe(200)
        expect((yield* call("POST", `/api/venue2/accounts/${account.id}/setup`, { token, body: venue2Keys })).status)
          .toBe(200)

        // Back again, venue1 answers on the next request.
        yield* Effect.promise(proxy1.start)
        expect((yield* venue1Prices).status).toBe(200)
      }))
  })
})
