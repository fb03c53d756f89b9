import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { makeVenue1Http, makeVenue2Http, type VenueConnection } from "@trading-platform/core"
import { Duration, Effect } from "effect"
import { createServer } from "node:net"
import { defaultMarginTables } from "../../src/venues/MarginTiers.js"
import {
  type FakeVenue,
  fakeVenue1Wallet,
  fakeVenue2Keys,
  refusedAddress,
  startFakeVenue1,
  startFakeVenue2,
  venue1AgentKey,
  venue2Account
} from "../support/FakeVenues.js"

const hour = 3_600_000
const connection = (baseUrl: string, retries = 0): VenueConnection => ({
  mode: "http",
  baseUrl,
  timeout: Duration.seconds(1),
  retries
})
const wallet = {
  kind: "wallet",
  environment: "testnet",
  address: `0x${"ab".repeat(20)}`,
  privateKey: venue1AgentKey
} as const
const keys = { kind: "apiKey", environment: "testnet", ...venue2Account } as const

/** A port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port
      probe.close(() => resolve(port))
    })
  })

let fake1: FakeVenue
let fake2: FakeVenue
beforeAll(async () => {
  fake1 = await startFakeVenue1()
  fake2 = await startFakeVenue2()
})
afterAll(async () => {
  await fake1.close()
  await fake2.close()
})

describe("venue1 over its HTTP API", () => {
  it.effect("reads tickers, candles, funding, open interest, depth and trades in the platform's shapes", () =>
    Effect.gen(function*() {
      fake1.behavior = "ok"
      const venue = yield* makeVenue1Http(connection(fake1.url))
      const tickers = yield* venue.tickers
      expect(tickers.get("BTC")).toEqual({
        symbol: "BTC",
        price: 65_000,
        change_24h: expect.closeTo((65_000 / (65_000 * 0.98) - 1) * 100, 8),
        volume_24h: 987654321.5,
        funding_rate: 0.0000125
      })
      const bars = yield* venue.candles({ symbol: "ETH", timeframe: "1h", start: 10 * hour, end: 14 * hour })
      expect(bars.map((b) => b.time)).toEqual([10 * hour, 11 * hour, 12 * hour, 13 * hour])
      expect(bars[0]).toEqual({ time: 10 * hour, open: 105, high: 108, low: 99, close: 102, volume: 750 })
      // Hourly funding payments of [10h, 14h); an unlisted coin is UnknownSymbol.
      const paid = yield* venue.fundingHistory({ symbol: "ETH", start: 10 * hour, end: 14 * hour })
      expect(paid).toEqual(
        [10, 11, 12, 13].map((h) => ({ time: h * hour, rate: Number((0.0001 * (1 + h % 3)).toFixed(8)) }))
      )
      expect(
        (yield* Effect.flip(venue.fundingHistory({ symbol: "NOPE", start: 10 * hour, end: 14 * hour })))._tag
      ).toBe("UnknownSymbol")
      expect(yield* venue.openInterest("BTC")).toBe(1234.5)
      expect((yield* venue.funding("BTC")).rate).toBe(0.0000125)
      expect(yield* venue.depth("BTC", 5)).toEqual({ bids: [[99.5, 2]], asks: [[100.5, 3]] })
      expect((yield* venue.trades("BTC", 10)).map((t) => [t.time, t.side])).toEqual([[2_000, "sell"], [1_000, "buy"]])
      const failures = [
        Effect.flip(venue.depth("NOPE", 5)),
        Effect.flip(venue.openInterest("NOPE")),
        Effect.flip(venue.candles({ symbol: "NOPE", timeframe: "1h", start: 0, end: hour }))
      ]
      for (const failure of yield* Effect.all(failures)) {
        expect(failure).toMatchObject({ _tag: "UnknownSymbol", symbol: "NOPE" })
      }
    }))

  it.effect("reads each coin's rules from /info meta: lots of 10^-szDecimals, 10 USD minimum, brackets capped by maxLeverage", () =>
    Effect.gen(function*() {
      fake1.behavior = "ok"
      const symbols = yield* (yield* makeVenue1Http(connection(fake1.url))).symbols
      expect(symbols).toEqual([
        {
          symbol: "BTC",
          tick_size: 0.1,
          lot_size: 0.00001,
          min_quantity: 0.00001,
          min_notional: 10,
          max_leverage: 50,
          margin: defaultMarginTables.venue1
        },
        {
          symbol: "ETH",
          tick_size: 0.01,
          lot_size: 0.0001,
          min_quantity: 0.0001,
          min_notional: 10,
          max_leverage: 25,
          // ETH's 25x cap lowers both brackets; maintenance is at least half the initial margin at 25x.
          margin: {
            tiers: [
              { notional_floor: 0, max_leverage: 25, maintenance_rate: 0.02 },
              { notional_floor: 150_000_000, max_leverage: 20, maintenance_rate: 0.025 }
            ],
            liquidation_fee_rate: 0
          }
        }
      ])
      // A configured table replaces the default one.
      const own = {
        tiers: [{ notional_floor: 0, max_leverage: 10, maintenance_rate: 0.03 }],
        liquidation_fee_rate: 0.01
      }
      const configured = yield* (yield* makeVenue1Http(connection(fake1.url), own)).symbols
      expect(configured.map((s) => [s.max_leverage, s.margin])).toEqual([[50, own], [25, own]])
    }))

  it.effect("reads the wallet's balances and positions; a refused wallet is VenueRejected", () =>
    Effect.gen(function*() {
      fake1.behavior = "ok"
      const venue = yield* makeVenue1Http(connection(fake1.url))
      yield* venue.checkCredentials(wallet)
      expect(yield* venue.balances(wallet)).toEqual([{ asset: "USDC", total: 1500.25, available: 950.5 }])
      expect(yield* venue.positions(wallet)).toEqual([{
        symbol: "ETH",
        side: "short",
        size: 2.5,
        entry_price: 3100,
        leverage: 5
      }])
      expect((yield* Effect.flip(venue.checkCredentials({ ...wallet, address: refusedAddress })))._tag).toBe(
        "VenueRejected"
      )
      expect((yield* Effect.flip(venue.checkCredentials({ ...wallet, privateKey: "0x1" })))._tag).toBe("VenueRejected")
    }))

  it.effect("places and cancels orders with /exchange actions signed by the wallet's key", () =>
    Effect.gen(function*() {
      fake1.behavior = "ok"
      const venue = yield* makeVenue1Http(connection(fake1.url))
      const market = yield* venue.placeOrder(wallet, { symbol: "ETH", side: "buy", quantity: 1.234567 })
      expect(market).toEqual({
        order_id: "77",
        status: "filled",
        filled_quantity: 1.2345,
        average_price: 3200.5,
        fee: null
      })
      // ETH is asset 1; a market buy is an IOC limit 5 % above the mid (3200), to five significant
      // figures; its size goes down to ETH's lot (4 size decimals), never above what was asked.
      expect(fake1.last.body.action).toEqual({
        type: "order",
        orders: [{ a: 1, b: true, p: "3360", s: "1.2345", r: false, t: { limit: { tif: "Ioc" } } }],
        grouping: "na"
      })
      const resting = yield* venue.placeOrder(wallet, { symbol: "BTC", side: "sell", quantity: 0.5, price: 70000.123 })
      expect(resting).toMatchObject({ order_id: expect.stringMatching(/^\d+$/), status: "open", filled_quantity: 0 })
      expect(fake1.last.body.action.orders[0]).toMatchObject({
        a: 0,
        b: false,
        p: "70000",
        t: { limit: { tif: "Gtc" } }
      })
      yield* venue.cancelOrder(wallet, { symbol: "BTC", order_id: resting.order_id })
      expect(fake1.last.body.action).toEqual({ type: "cancel", cancels: [{ a: 0, o: Number(resting.order_id) }] })
      const again = yield* Effect.flip(venue.cancelOrder(wallet, { symbol: "BTC", order_id: "12345" }))
      expect(again).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/never placed/) })
      const stranger = { ...wallet, privateKey: `0x${"11".repeat(32)}` }
      const refused = yield* Effect.flip(venue.placeOrder(stranger, { symbol: "ETH", side: "buy", quantity: 1 }))
      expect(refused).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/does not exist/) })
      expect(yield* Effect.flip(venue.placeOrder(wallet, { symbol: "NOPE", side: "buy", quantity: 1 }))).toMatchObject({
        _tag: "UnknownSymbol"
      })
    }))

  it.effect("looks orders up by client order id, sets leverage, rests reduce-only triggers and arms scheduleCancel", () =>
    Effect.gen(function*() {
      fake1.behavior = "ok"
      const venue = yield* makeVenue1Http(connection(fake1.url))
      const own = fakeVenue1Wallet()
      const w = {
        kind: "wallet",
        environment: "testnet",
        address: own.wallet_address,
        privateKey: own.private_key
      } as const
      expect(yield* venue.orderByKey(w, { symbol: "ETH", client_order_id: "never-sent" })).toBeUndefined()
      yield* venue.setLeverage(w, { symbol: "ETH", leverage: 7, margin_mode: "isolated" })
      expect(fake1.last.body.action).toEqual({ type: "updateLeverage", asset: 1, isCross: false, leverage: 7 })
      const opened = yield* venue.placeOrder(w, { symbol: "ETH", side: "buy", quantity: 2, client_order_id: "open-1" })
      expect(opened).toMatchObject({ status: "filled", filled_quantity: 2 })
      // Found by its key: the venue's own id, and the price of its fills.
      expect(yield* venue.orderByKey(w, { symbol: "ETH", client_order_id: "open-1" })).toEqual({
        order_id: expect.stringMatching(/^\d+$/),
        status: "filled",
        filled_quantity: 2,
        average_price: 3200.5
      })
      expect(yield* venue.positions(w)).toEqual([
        { symbol: "ETH", side: "long", size: 2, entry_price: 3200.5, leverage: 7 }
      ])
      const stop = yield* venue.placeProtection(w, {
        symbol: "ETH",
        kind: "stop_loss",
        side: "sell",
        trigger_price: 3000,
        quantity: 2,
        client_order_id: "sl-1"
      })
      // A market trigger, reduce-only, its limit 5 % through the trigger; its id found by its key.
      expect(fake1.orderBodies.at(-1).action.orders[0]).toMatchObject({
        a: 1,
        b: false,
        p: "2850",
        s: "2",
        r: true,
        t: { trigger: { isMarket: true, triggerPx: "3000", tpsl: "sl" } }
      })
      expect(yield* venue.orderByKey(w, { symbol: "ETH", client_order_id: "sl-1" })).toMatchObject({
        order_id: stop,
        status: "open",
        filled_quantity: 0
      })
      // A close that would open the other way is refused by a reduce-only order.
      const grown = yield* Effect.flip(
        venue.placeOrder(w, { symbol: "BTC", side: "sell", quantity: 0.1, reduce_only: true })
      )
      expect(grown).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/Reduce only/) })
      yield* venue.cancelAllAfter(w, { symbols: ["ETH"], deadline: 1_900_000_000_000 })
      expect(fake1.last.body.action).toEqual({ type: "scheduleCancel", time: 1_900_000_000_000 })
      yield* venue.cancelAllAfter(w, { symbols: ["ETH"], deadline: null })
      expect(fake1.last.body.action).toEqual({ type: "scheduleCancel" })
    }))
})

describe("venue2 over its HTTP API", () => {
  it.effect("reads tickers (USDT pairs only), candles, funding, open interest, depth and trades", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      const venue = yield* makeVenue2Http(connection(fake2.url))
      const tickers = yield* venue.tickers
      expect(Array.from(tickers.keys()).sort()).toEqual(["BTC", "ETH"])
      expect(tickers.get("ETH")).toEqual({
        symbol: "ETH",
        price: 3200,
        change_24h: 1.25,
        volume_24h: 123456789.12,
        funding_rate: 0.0001
      })
      const bars = yield* venue.candles({ symbol: "BTC", timeframe: "1d", start: 0, end: 3 * 24 * hour })
      expect(bars.map((b) => b.time)).toEqual([0, 24 * hour, 48 * hour])
      expect(yield* venue.openInterest("BTC")).toBe(81234.567)
      expect(yield* venue.funding("BTC")).toEqual({ rate: 0.0001, next_funding_time: 1_800_000 })
      expect(yield* venue.depth("BTC", 5)).toEqual({ bids: [[99.5, 2]], asks: [[100.5, 3]] })
      expect((yield* venue.trades("BTC", 10)).map((t) => [t.time, t.side])).toEqual([[2_000, "buy"], [1_000, "sell"]])
      expect(yield* Effect.flip(venue.openInterest("NOPE"))).toMatchObject({ _tag: "UnknownSymbol", symbol: "NOPE" })
    }))

  it.effect("reads each USDT pair's rules from exchangeInfo filters", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      const symbols = yield* (yield* makeVenue2Http(connection(fake2.url))).symbols
      // The BTCUSDC pair is not a USDT pair; ETH's market orders go in lots of 0.01 (MARKET_LOT_SIZE).
      expect(symbols).toEqual([
        {
          symbol: "BTC",
          tick_size: 0.1,
          lot_size: 0.001,
          min_quantity: 0.001,
          min_notional: 5,
          max_leverage: 125,
          margin: defaultMarginTables.venue2
        },
        {
          symbol: "ETH",
          tick_size: 0.1,
          lot_size: 0.01,
          min_quantity: 0.001,
          min_notional: 5,
          max_leverage: 125,
          margin: defaultMarginTables.venue2
        }
      ])
      // A configured table sets the cap, and the brackets.
      const own = {
        tiers: [{ notional_floor: 0, max_leverage: 20, maintenance_rate: 0.025 }, {
          notional_floor: 1_000_000,
          max_leverage: 10,
          maintenance_rate: 0.05
        }],
        liquidation_fee_rate: 0.015
      }
      const configured = yield* (yield* makeVenue2Http(connection(fake2.url), own)).symbols
      expect(configured[0]).toMatchObject({ symbol: "BTC", max_leverage: 20, margin: own })
    }))

  it.effect("sends an order's quantity and price as plain decimals and asks for the full result", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      fake2.orders = "ok"
      const venue = yield* makeVenue2Http(connection(fake2.url))
      // 0.1 + 0.2 is 0.30000000000000004 in binary floating point: the venue receives 0.3.
      const market = yield* venue.placeOrder(keys, { symbol: "ETH", side: "sell", quantity: 0.1 + 0.2 })
      const query = new URLSearchParams(fake2.last.query)
      expect(fake2.last.query).toMatch(/(^|&)quantity=0\.3&/)
      expect(query.get("newOrderRespType")).toBe("RESULT")
      expect(query.get("type")).toBe("MARKET")
      // The full answer says FILLED: the order is filled, not open as its acknowledgement would say.
      expect(market).toEqual({
        order_id: "42",
        status: "filled",
        filled_quantity: 0.3,
        average_price: 65010.5,
        fee: null
      })
      const small = yield* venue.placeOrder(keys, { symbol: "BTC", side: "buy", quantity: 1e-7 * 10_000, price: 1e-7 })
      expect(fake2.last.query).toMatch(/(^|&)quantity=0\.001&/)
      expect(fake2.last.query).toMatch(/(^|&)price=0\.0000001&/)
      expect(small).toMatchObject({ status: "open", filled_quantity: 0, average_price: null })
    }))

  it.effect("pages through more candles than one answer holds", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      const venue = yield* makeVenue2Http(connection(fake2.url))
      fake2.calls.clear()
      const bars = yield* venue.candles({ symbol: "ETH", timeframe: "1m", start: 0, end: 2000 * 60_000 })
      expect(bars.length).toBe(2000)
      expect(bars.at(-1)!.time).toBe(1999 * 60_000)
      expect(fake2.calls.get("/fapi/v1/klines")).toBe(2)
    }))

  it.effect("signs account calls with HMAC-SHA256; wrong keys are VenueRejected", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      // The venue account as it starts, before the orders of the tests above.
      fake2.accounts.clear()
      const venue = yield* makeVenue2Http(connection(fake2.url))
      yield* venue.checkCredentials(keys)
      expect(yield* venue.balances(keys)).toEqual([{ asset: "USDT", total: 1000.5, available: 800.25 }])
      expect(yield* venue.positions(keys)).toEqual([{
        symbol: "BTC",
        side: "long",
        size: 0.01,
        entry_price: 64000,
        leverage: 10
      }])
      expect(yield* venue.placeOrder(keys, { symbol: "BTC", side: "buy", quantity: 0.01 })).toEqual({
        order_id: "42",
        status: "filled",
        filled_quantity: 0.01,
        average_price: 65010.5,
        fee: null
      })
      yield* venue.cancelOrder(keys, { symbol: "BTC", order_id: "42" })
      const wrongSecret = yield* Effect.flip(venue.checkCredentials({ ...keys, secretKey: "another-secret-value" }))
      expect(wrongSecret).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/Signature/) })
      const wrongKey = yield* Effect.flip(venue.checkCredentials({ ...keys, apiKey: "someone-else" }))
      expect(wrongKey).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/API key/) })
    }))
})

describe("venue2's account calls for live safety", () => {
  it.effect("looks orders up by client order id, sets margin mode and leverage, rests closePosition triggers and counts down cancel-all", () =>
    Effect.gen(function*() {
      fake2.behavior = "ok"
      const venue = yield* makeVenue2Http(connection(fake2.url))
      const own = fakeVenue2Keys()
      const k = { kind: "apiKey", environment: "testnet", apiKey: own.api_key, secretKey: own.secret_key } as const
      // -2013 "Order does not exist": the venue never received it.
      expect(yield* venue.orderByKey(k, { symbol: "BTC", client_order_id: "never-sent" })).toBeUndefined()
      yield* venue.setLeverage(k, { symbol: "BTC", leverage: 5, margin_mode: "isolated" })
      // Set again: -4046 "No need to change margin type" is no failure.
      yield* venue.setLeverage(k, { symbol: "BTC", leverage: 5, margin_mode: "isolated" })
      expect(fake2.accounts.get(own.api_key)!.settings.get("BTC")).toEqual({ leverage: 5, cross: false })
      yield* venue.placeOrder(k, { symbol: "BTC", side: "buy", quantity: 0.01, client_order_id: "open-2" })
      expect(yield* venue.orderByKey(k, { symbol: "BTC", client_order_id: "open-2" })).toEqual({
        order_id: expect.stringMatching(/^\d+$/),
        status: "filled",
        filled_quantity: 0.01,
        average_price: 65010.5
      })
      const tp = yield* venue.placeProtection(k, {
        symbol: "BTC",
        kind: "take_profit",
        side: "sell",
        trigger_price: 70000,
        quantity: 0.01,
        client_order_id: "tp-2"
      })
      const sent = new URLSearchParams(fake2.orderQueries.at(-1))
      expect(
        Object.fromEntries(["type", "side", "stopPrice", "closePosition", "workingType"].map((k) => [k, sent.get(k)]))
      )
        .toEqual({
          type: "TAKE_PROFIT_MARKET",
          side: "SELL",
          stopPrice: "70000",
          closePosition: "true",
          workingType: "MARK_PRICE"
        })
      expect(yield* venue.orderByKey(k, { symbol: "BTC", client_order_id: "tp-2" })).toMatchObject({
        order_id: tp,
        status: "open"
      })
      // A trigger the mark has passed already is refused, not fired.
      const passed = yield* Effect.flip(venue.placeProtection(k, {
        symbol: "BTC",
        kind: "stop_loss",
        side: "sell",
        trigger_price: 66000,
        quantity: 0.01,
        client_order_id: "sl-2"
      }))
      expect(passed).toMatchObject({ _tag: "VenueRejected", error: expect.stringMatching(/immediately trigger/) })
      yield* venue.placeOrder(k, { symbol: "BTC", side: "sell", quantity: 0.01, reduce_only: true })
      expect(new URLSearchParams(fake2.orderQueries.at(-1)).get("reduceOnly")).toBe("true")
      expect(yield* venue.positions(k)).toEqual([])
      yield* venue.cancelAllAfter(k, { symbols: ["BTC", "ETH"], deadline: Date.now() + 60_000 })
      expect(fake2.accounts.get(own.api_key)!.cancelAt).toBeGreaterThan(Date.now() + 50_000)
      yield* venue.cancelAllAfter(k, { symbols: ["BTC"], deadline: null })
      expect(new URLSearchParams(fake2.last.query).get("countdownTime")).toBe("0")
      expect(fake2.accounts.get(own.api_key)!.cancelAt).toBeNull()
    }))
})

describe("venue failures", () => {
  it.effect("a 5xx is upstream_error after the configured retries; 503 is unavailable; a bad body upstream_error", () =>
    Effect.gen(function*() {
      const venue = yield* makeVenue2Http(connection(fake2.url, 2))
      fake2.behavior = "error500"
      fake2.calls.clear()
      expect((yield* Effect.flip(venue.tickers))._tag).toBe("UpstreamError")
      // Two parallel calls, each tried three times.
      expect(fake2.calls.get("/fapi/v1/ticker/24hr")).toBe(3)
      fake2.behavior = "unavailable503"
      expect((yield* Effect.flip(venue.openInterest("BTC")))._tag).toBe("Unavailable")
      fake2.behavior = "garbage"
      expect((yield* Effect.flip(venue.openInterest("BTC")))._tag).toBe("UpstreamError")
      fake2.behavior = "ok"
    }))

  it.effect("a venue slower than the timeout is upstream_timeout, and is not asked again", () =>
    Effect.gen(function*() {
      const venue = yield* makeVenue1Http(connection(fake1.url, 2))
      fake1.behavior = "slow"
      fake1.calls.clear()
      expect((yield* Effect.flip(venue.tickers))._tag).toBe("UpstreamTimeout")
      expect(fake1.calls.get("metaAndAssetCtxs")).toBe(1)
      fake1.behavior = "ok"
    }))

  it.effect("a venue nobody answers at is upstream_error", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const venue = yield* makeVenue1Http(connection(`http://127.0.0.1:${port}`, 1))
      expect((yield* Effect.flip(venue.tickers))._tag).toBe("UpstreamError")
    }))
})
