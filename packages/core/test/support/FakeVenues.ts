import { secp256k1 } from "@noble/curves/secp256k1.js"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { l1Digest, recoverAddress } from "../../src/venues/Venue1Signing.js"

/** How a fake venue answers: normally, or failing in one of the ways a real venue fails. */
export type Behavior = "ok" | "error500" | "unavailable503" | "slow" | "garbage"

export interface FakeVenue {
  readonly url: string
  behavior: Behavior
  /** How order requests answer when `behavior` is "ok" (a venue failing only on orders). */
  orders: Behavior
  /** The client order ids of the orders placed, in order; a repeated one is refused. */
  readonly clientOrderIds: Array<string>
  /** Requests seen, by route (`/info` requests by their `type`). */
  readonly calls: Map<string, number>
  /** The raw query string (without `?`) of each order request, in order: what the venue received. */
  readonly orderQueries: Array<string>
  /** The body and the raw query string (without `?`) of the last request. */
  readonly last: { body?: any; query?: string }
  /** The most klines (candles) one answer holds, whatever the request asks: a venue's page cap. */
  klinesCap: number
  /** The next `times` requests (to `path` only, when given) answer 429 with `Retry-After: retryAfter` (seconds). */
  throttle: { times: number; retryAfter: number; path?: string }
  readonly close: () => Promise<void>
}

type Handler = (
  route: {
    readonly path: string
    readonly params: URLSearchParams
    readonly body: any
    readonly req: IncomingMessage
    readonly clientOrderIds: Array<string>
    readonly klinesCap: number
  }
) => {
  readonly status?: number
  readonly json: unknown
  readonly key?: string
  /** An order request, which answers as `orders` says. */
  readonly order?: boolean
}

const minute = 60_000
const intervals: Record<string, number> = {
  "1m": minute,
  "5m": 5 * minute,
  "15m": 15 * minute,
  "30m": 30 * minute,
  "1h": 60 * minute,
  "4h": 240 * minute,
  "1d": 1440 * minute
}

/**
 * Funding payments every `period` ms from the first at or after `start` up to `end` (inclusive), at
 * most `limit`: rate 0.0001 × (1 + the payment's number mod 3), as a decimal string.
 */
export const fakeFunding = (period: number, start: number, end: number, limit = Infinity) => {
  const out: Array<{ time: number; rate: string }> = []
  for (let t = Math.ceil(start / period) * period; t <= end && out.length < limit; t += period) {
    out.push({ time: t, rate: (0.0001 * (1 + (t / period) % 3)).toFixed(8) })
  }
  return out
}

/** Hours in which the venue traded nothing: it sends no bars for them, at any interval. */
export const fakeQuietHours = { from: Date.parse("2026-02-10T05:00:00Z"), to: Date.parse("2026-02-10T08:00:00Z") }

/**
 * Bars of the interval from the first boundary at or after `start` up to `end` (inclusive), at most
 * `limit`. Each is the aggregate of the venue's minute bars (open 100 + minute % 7), as a real
 * venue's higher-timeframe bars are, so bars built from minutes can be compared with them.
 */
export const fakeBars = (interval: string, start: number, end: number, limit = Infinity) => {
  const step = intervals[interval]!
  const out: Array<{ t: number; o: string; h: string; l: string; c: string; v: string }> = []
  for (let t = Math.ceil(start / step) * step; t <= end && out.length < limit; t += step) {
    const traded = []
    for (let m = t; m < t + step; m += minute) {
      if (m < fakeQuietHours.from || m >= fakeQuietHours.to) traded.push(100 + (m / minute) % 7)
    }
    if (traded.length === 0) continue
    out.push({
      t,
      o: traded[0]!.toFixed(2),
      h: (Math.max(...traded) + 2).toFixed(2),
      l: (Math.min(...traded) - 1).toFixed(2),
      c: (traded.at(-1)! + 1).toFixed(2),
      v: String(12.5 * traded.length)
    })
  }
  return out
}

const start = (handler: Handler): Promise<FakeVenue> =>
  new Promise((resolve) => {
    const calls = new Map<string, number>()
    const last: { body?: any; query?: string } = {}
    const clientOrderIds: Array<string> = []
    const orderQueries: Array<string> = []
    const venue = {
      behavior: "ok" as Behavior,
      orders: "ok" as Behavior,
      klinesCap: Infinity,
      throttle: { times: 0, retryAfter: 1 } as FakeVenue["throttle"]
    }
    const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = ""
      req.on("data", (chunk) => (raw += chunk))
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://fake")
        const body = raw === "" ? undefined : JSON.parse(raw)
        last.body = body
        last.query = url.search.replace(/^\?/, "")
        const answer = handler({
          path: url.pathname,
          params: url.searchParams,
          body,
          req,
          clientOrderIds,
          klinesCap: venue.klinesCap
        })
        const key = answer.key ?? url.pathname
        if (answer.order === true) orderQueries.push(last.query)
        calls.set(key, (calls.get(key) ?? 0) + 1)
        const send = (status: number, text: string) => {
          if (!res.writableEnded) res.writeHead(status, { "content-type": "application/json" }).end(text)
        }
        if (venue.throttle.times > 0 && (venue.throttle.path === undefined || venue.throttle.path === url.pathname)) {
          venue.throttle.times--
          if (!res.writableEnded) {
            res.writeHead(429, { "content-type": "application/json", "retry-after": String(venue.throttle.retryAfter) })
              .end(JSON.stringify({ code: -1003, msg: "Too many requests" }))
          }
          return
        }
        switch (venue.behavior === "ok" && answer.order === true ? venue.orders : venue.behavior) {
          case "error500":
            return send(500, JSON.stringify({ error: "internal" }))
          case "unavailable503":
            return send(503, JSON.stringify({ error: "maintenance" }))
          case "garbage":
            return send(200, "<html>not json</html>")
          case "slow":
            return void setTimeout(() => send(200, JSON.stringify(answer.json)), 3_000).unref()
          default:
            return send(answer.status ?? 200, JSON.stringify(answer.json))
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      resolve(Object.assign(venue, {
        url: `http://127.0.0.1:${port}`,
        calls,
        clientOrderIds,
        orderQueries,
        last,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      }))
    })
  })

const coins = ["BTC", "ETH"] as const
const reference: Record<string, number> = { BTC: 65_000, ETH: 3_200 }

/** The address venue1 refuses (answers 422, as it does for a malformed user). */
export const refusedAddress = `0x${"0d".repeat(20)}`

/** The API wallet key the fake venue1 accepts signatures from. */
export const venue1AgentKey = `0x${"5e".repeat(32)}`
const agentAddress = `0x${
  bytesToHex(keccak_256(secp256k1.getPublicKey(venue1AgentKey.slice(2), false).subarray(1)).subarray(12))
}`
export const venue1RestingOrder = 78

/** venue1's signed `/exchange` (a testnet): checks the signer, fills IOC orders, rests GTC ones, refuses a repeated cloid. */
const exchange = (body: any, clientOrderIds: Array<string>) => {
  const signer = recoverAddress(l1Digest(body.action, body.nonce, false), body.signature)
  if (signer !== agentAddress) {
    return { key: "exchange", json: { status: "err", response: `User or API Wallet ${signer} does not exist.` } }
  }
  const ok = (statuses: Array<unknown>) => ({
    key: `exchange:${body.action.type}`,
    json: { status: "ok", response: { type: body.action.type, data: { statuses } } },
    order: body.action.type === "order"
  })
  if (body.action.type === "cancel") {
    return ok([
      body.action.cancels[0].o === venue1RestingOrder
        ? "success"
        : { error: "Order was never placed, already canceled, or filled." }
    ])
  }
  const order = body.action.orders[0]
  if (order.a >= coins.length) return ok([{ error: "Invalid asset" }])
  if (order.c !== undefined) {
    if (clientOrderIds.includes(order.c)) return ok([{ error: "Duplicate cloid" }])
    clientOrderIds.push(order.c)
  }
  return ok([
    order.t.limit.tif === "Ioc"
      ? { filled: { totalSz: order.s, avgPx: "3200.5", oid: 77 } }
      : { resting: { oid: venue1RestingOrder } }
  ])
}

/** A venue1 (Hyperliquid-style) server: `POST /info` and signed `POST /exchange`. */
export const startFakeVenue1 = () =>
  start(({ body, clientOrderIds, path }) => {
    if (path === "/exchange") return exchange(body, clientOrderIds)
    const type = String(body?.type)
    const known = (coin: unknown) => typeof coin === "string" && coin in reference
    switch (type) {
      case "allMids":
        return { key: type, json: Object.fromEntries(coins.map((c) => [c, String(reference[c])])) }
      case "metaAndAssetCtxs":
        return {
          key: type,
          json: [
            {
              universe: coins.map((name) => ({
                name,
                szDecimals: name === "BTC" ? 5 : 4,
                maxLeverage: name === "BTC" ? 50 : 25
              }))
            },
            coins.map((c) => ({
              funding: "0.0000125",
              openInterest: "1234.5",
              prevDayPx: String(reference[c]! * 0.98),
              dayNtlVlm: "987654321.5",
              markPx: String(reference[c]! + 1),
              midPx: String(reference[c]),
              oraclePx: String(reference[c]),
              premium: "0.0001"
            }))
          ]
        }
      case "candleSnapshot": {
        const { coin, endTime, interval, startTime } = body.req
        const bars = known(coin) ? fakeBars(interval, startTime, endTime) : []
        return {
          key: type,
          json: bars.map((b) => ({ ...b, T: b.t + intervals[interval]! - 1, s: coin, i: interval, n: 3 }))
        }
      }
      case "fundingHistory":
        return {
          key: type,
          json: known(body.coin)
            ? fakeFunding(3_600_000, body.startTime, body.endTime, 500).map((f) => ({
              coin: body.coin,
              fundingRate: f.rate,
              premium: "0.0001",
              time: f.time
            }))
            : []
        }
      case "l2Book":
        return {
          key: type,
          json: known(body.coin)
            ? { coin: body.coin, time: 1, levels: [[{ px: "99.5", sz: "2", n: 1 }], [{ px: "100.5", sz: "3", n: 2 }]] }
            : null
        }
      case "recentTrades":
        return {
          key: type,
          json: known(body.coin)
            ? [{ coin: body.coin, side: "B", px: "100.1", sz: "0.5", time: 1_000, hash: "0x0", tid: 1 }, {
              coin: body.coin,
              side: "A",
              px: "100.2",
              sz: "0.7",
              time: 2_000,
              hash: "0x1",
              tid: 2
            }]
            : []
        }
      case "clearinghouseState":
        return body.user === refusedAddress
          ? { key: type, status: 422, json: "Failed to deserialize the JSON body into the target type" }
          : {
            key: type,
            json: {
              marginSummary: {
                accountValue: "1500.25",
                totalNtlPos: "7750.0",
                totalRawUsd: "9250.25",
                totalMarginUsed: "1550.0"
              },
              withdrawable: "950.5",
              assetPositions: [{
                type: "oneWay",
                position: { coin: "ETH", szi: "-2.5", entryPx: "3100.0", leverage: { type: "cross", value: 5 } }
              }],
              time: 1
            }
          }
      case "userFills":
        // One ordinary fill, and one that liquidated this user's BTC long.
        return {
          key: type,
          json: [
            {
              coin: "ETH",
              px: "3100.0",
              sz: "2.5",
              side: "A",
              time: 1_000,
              dir: "Open Short",
              closedPnl: "0.0",
              oid: 1,
              tid: 1
            },
            {
              coin: "BTC",
              px: "61000.0",
              sz: "0.4",
              side: "A",
              time: 2_000,
              dir: "Close Long",
              closedPnl: "-1600.0",
              oid: 2,
              tid: 2,
              liquidation: { liquidatedUser: body.user, markPx: "61000.0", method: "market" }
            }
          ]
        }
      default:
        return { key: type, status: 422, json: "Failed to deserialize the JSON body into the target type" }
    }
  })

/** The only key pair the fake venue2 accepts. */
export const venue2Account = { apiKey: "AK0123456789abcdefXYZ", secretKey: "SK0123456789abcdefSECRETVALUE" } as const

const invalidSymbol = { status: 400, json: { code: -1121, msg: "Invalid symbol." } }

/** A venue2 (Binance-futures-style) REST server, with HMAC-SHA256 signed account calls. */
export const startFakeVenue2 = () =>
  start(({ clientOrderIds, klinesCap, params, path, req }) => {
    const symbol = params.get("symbol")
    const coin = symbol?.replace(/USDT$/, "")
    const listed = coin !== undefined && coin in reference
    if (path.startsWith("/fapi/v2/") || (path === "/fapi/v1/order")) {
      if (req.headers["x-mbx-apikey"] !== venue2Account.apiKey) {
        return { status: 401, json: { code: -2015, msg: "Invalid API-key, IP, or permissions for action." } }
      }
      const query = (req.url ?? "").split("?")[1] ?? ""
      const unsigned = query.replace(/&signature=[0-9a-f]+$/, "")
      const expected = createHmac("sha256", venue2Account.secretKey).update(unsigned).digest("hex")
      if (params.get("signature") !== expected || !params.has("timestamp")) {
        return { status: 400, json: { code: -1022, msg: "Signature for this request is not valid." } }
      }
    }
    switch (path) {
      case "/fapi/v1/exchangeInfo":
        return {
          json: {
            symbols: [
              ...coins.map((c) => ({
                symbol: `${c}USDT`,
                filters: [
                  { filterType: "PRICE_FILTER", tickSize: "0.10", minPrice: "0.10", maxPrice: "1000000" },
                  { filterType: "LOT_SIZE", stepSize: "0.001", minQty: "0.001", maxQty: "1000" },
                  // Market orders in coarser lots for ETH, as venue2 does for some pairs.
                  { filterType: "MARKET_LOT_SIZE", stepSize: c === "ETH" ? "0.01" : "0.001", minQty: "0.001" },
                  { filterType: "MIN_NOTIONAL", notional: "5" }
                ]
              })),
              { symbol: "BTCUSDC", filters: [{ filterType: "PRICE_FILTER", tickSize: "0.1" }] }
            ]
          }
        }
      case "/fapi/v1/ticker/24hr":
        return {
          json: [
            ...coins.map((c) => ({
              symbol: `${c}USDT`,
              lastPrice: String(reference[c]),
              priceChangePercent: "1.250",
              quoteVolume: "123456789.12"
            })),
            { symbol: "BTCUSDC", lastPrice: "1", priceChangePercent: "0", quoteVolume: "0" }
          ]
        }
      case "/fapi/v1/premiumIndex": {
        const row = (c: string) => ({
          symbol: `${c}USDT`,
          markPrice: String(reference[c]),
          lastFundingRate: "0.00010000",
          nextFundingTime: 1_800_000
        })
        if (symbol === null) return { json: coins.map(row) }
        return listed ? { json: row(coin) } : invalidSymbol
      }
      case "/fapi/v1/fundingRate":
        if (!listed) return invalidSymbol
        return {
          json: fakeFunding(
            8 * 3_600_000,
            Number(params.get("startTime")),
            Number(params.get("endTime")),
            Math.min(Number(params.get("limit")), klinesCap)
          ).map((f) => ({ symbol, fundingTime: f.time, fundingRate: f.rate, markPrice: "100" }))
        }
      case "/fapi/v1/openInterest":
        return listed ? { json: { symbol, openInterest: "81234.567", time: 1 } } : invalidSymbol
      case "/fapi/v1/klines": {
        if (!listed) return invalidSymbol
        const bars = fakeBars(
          params.get("interval")!,
          Number(params.get("startTime")),
          Number(params.get("endTime")),
          Math.min(Number(params.get("limit")), klinesCap)
        )
        return { json: bars.map((b) => [b.t, b.o, b.h, b.l, b.c, b.v, b.t + 1, "0", 3, "0", "0", "0"]) }
      }
      case "/fapi/v1/depth":
        return listed ? { json: { lastUpdateId: 1, bids: [["99.5", "2"]], asks: [["100.5", "3"]] } } : invalidSymbol
      case "/fapi/v1/trades":
        return listed
          ? {
            json: [{ id: 1, price: "100.1", qty: "0.5", time: 1_000, isBuyerMaker: true }, {
              id: 2,
              price: "100.2",
              qty: "0.7",
              time: 2_000,
              isBuyerMaker: false
            }]
          }
          : invalidSymbol
      case "/fapi/v2/account":
        return { json: { totalWalletBalance: "1000.0", assets: [], positions: [] } }
      case "/fapi/v2/balance":
        return { json: [{ asset: "USDT", balance: "1000.5", availableBalance: "800.25" }] }
      case "/fapi/v2/positionRisk":
        return {
          json: [{ symbol: "BTCUSDT", positionAmt: "0.010", entryPrice: "64000.0", leverage: "10" }, {
            symbol: "ETHUSDT",
            positionAmt: "0",
            entryPrice: "0",
            leverage: "5"
          }]
        }
      case "/fapi/v1/order": {
        if (req.method === "DELETE") return { json: { orderId: Number(params.get("orderId")), status: "CANCELED" } }
        const clientId = params.get("newClientOrderId")
        if (clientId !== null) {
          if (clientOrderIds.includes(clientId)) {
            return { order: true, status: 400, json: { code: -4116, msg: "ClientOrderId is duplicated." } }
          }
          clientOrderIds.push(clientId)
        }
        // A market order fills whole; without `newOrderRespType=RESULT` the answer is the
        // acknowledgement, taken before matching: NEW, nothing executed.
        const filled = params.get("type") === "MARKET" && params.get("newOrderRespType") === "RESULT"
        return {
          order: true,
          json: {
            orderId: 42,
            status: filled ? "FILLED" : "NEW",
            executedQty: filled ? params.get("quantity") : "0",
            avgPrice: filled ? "65010.5" : "0.00"
          }
        }
      }
      default:
        return { status: 404, json: { code: -5000, msg: "Path not found" } }
    }
  })
