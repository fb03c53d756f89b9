import { secp256k1 } from "@noble/curves/secp256k1.js"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { l1Digest, recoverAddress } from "../../src/venues/Venue1Signing.js"

/**
 * How a fake venue answers: normally, or failing in one of the ways a real venue fails. The
 * request is acted on first (an order is placed) and then answered so, except `unreachable`
 * (nothing is acted on: the connection is cut, as when the venue's name does not resolve);
 * `drop` cuts the connection after acting, so the answer is lost; `hang` acts and never answers.
 */
export type Behavior = "ok" | "error500" | "unavailable503" | "slow" | "garbage" | "unreachable" | "drop" | "hang"

/** A venue account's state: what the fake venue holds for one API key (venue2) or one signing wallet (venue1). */
export interface FakeAccount {
  /** Signed size (negative is short), entry price and leverage, by coin. */
  readonly positions: Map<string, { szi: number; entryPx: number; leverage: number; cross: boolean }>
  /** Every order, by the venue's id. */
  readonly orders: Map<number, FakeOrder>
  /** Leverage and margin mode set per coin. */
  readonly settings: Map<string, { leverage: number; cross: boolean }>
  /** The fills, oldest first. */
  readonly fills: Array<{ oid: number; coin: string; px: number; sz: number; side: "buy" | "sell"; time: number }>
  /** When the dead-man switch cancels the open orders (wall-clock ms), if armed. */
  cancelAt: number | null
  /** Quote balance, moved by realised profit and loss. */
  balance: number
}

export interface FakeOrder {
  readonly oid: number
  readonly coin: string
  readonly side: "buy" | "sell"
  readonly size: number
  filled: number
  avgPx: number | null
  status: "open" | "filled" | "canceled"
  readonly cloid: string | null
  readonly reduceOnly: boolean
  /** A take profit or stop loss: the mark that fires it, closing the whole position. */
  readonly trigger: { readonly kind: "tp" | "sl"; readonly px: number } | null
  /** A resting limit order's price: it fills there once the mark reaches it. */
  readonly limitPx: number | null
}

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
  /** The body of each order request, in order. */
  readonly orderBodies: Array<any>
  /** The body and the raw query string (without `?`) of the last request. */
  readonly last: { body?: any; query?: string }
  /** The most klines (candles) one answer holds, whatever the request asks: a venue's page cap. */
  klinesCap: number
  /** The next `times` requests (to `path` only, when given) answer 429 with `Retry-After: retryAfter` (seconds). */
  throttle: { times: number; retryAfter: number; path?: string }
  /** The part of the next market orders that executes (1: all of it); the rest expires. */
  fillRatio: number
  /** Orders are refused for insufficient margin. */
  marginShort: boolean
  /** Called once an order request has been acted on, before it is answered: a fault can begin exactly then. */
  afterOrder: () => void
  /** Venue accounts by key (venue2's API key, venue1's signing address). */
  readonly accounts: Map<string, FakeAccount>
  /** Moves a coin's mark; the take profits and stop losses it reaches fill at their trigger. */
  readonly setMark: (coin: string, price: number) => void
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
    readonly venue: FakeVenue
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
    const orderBodies: Array<any> = []
    const accounts = new Map<string, FakeAccount>()
    const venue = {
      behavior: "ok" as Behavior,
      orders: "ok" as Behavior,
      klinesCap: Infinity,
      throttle: { times: 0, retryAfter: 1 } as FakeVenue["throttle"],
      fillRatio: 1,
      marginShort: false,
      afterOrder: () => {},
      accounts,
      setMark: (coin: string, price: number) => {
        marks[coin] = price
        for (const account of accounts.values()) fireTriggers(account, coin, price)
      }
    }
    const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = ""
      req.on("data", (chunk) => (raw += chunk))
      req.on("end", () => {
        // Nothing reaches the venue: the connection fails as an unresolvable name or a refused connection does.
        if (venue.behavior === "unreachable") return void req.socket.destroy()
        const url = new URL(req.url ?? "/", "http://fake")
        const body = raw === "" ? undefined : JSON.parse(raw)
        // `orders: "unreachable"`: an order is lost on its way, before the venue sees it.
        const ordering = (url.pathname === "/fapi/v1/order" && req.method === "POST") ||
          (url.pathname === "/exchange" && body?.action?.type === "order")
        if (ordering && venue.behavior === "ok" && venue.orders === "unreachable") return void req.socket.destroy()
        last.body = body
        last.query = url.search.replace(/^\?/, "")
        const answer = handler({
          path: url.pathname,
          params: url.searchParams,
          body,
          req,
          clientOrderIds,
          klinesCap: venue.klinesCap,
          venue: venue as unknown as FakeVenue
        })
        const key = answer.key ?? url.pathname
        if (answer.order === true) {
          orderQueries.push(last.query)
          orderBodies.push(body)
          venue.afterOrder()
        }
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
          case "drop":
          case "unreachable":
            return void req.socket.destroy()
          case "hang":
            return
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
        orderBodies,
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
// The marks setMark moved (shared by every fake: tests move them, then put them back).
const marks: Record<string, number> = {}
const markOf = (coin: string) => marks[coin] ?? reference[coin]!

const newAccount = (): FakeAccount => ({
  positions: new Map(),
  orders: new Map(),
  settings: new Map(),
  fills: [],
  cancelAt: null,
  balance: 10_000
})

let nextOid = 1_000

/** Books a fill on the venue account: the position grows, shrinks or flips; realised PnL moves the balance. */
const book = (account: FakeAccount, order: FakeOrder, sz: number, px: number) => {
  const sign = order.side === "buy" ? 1 : -1
  const held = account.positions.get(order.coin)
  const setting = account.settings.get(order.coin) ?? { leverage: 20, cross: true }
  const before = held?.szi ?? 0
  const after = before + sign * sz
  if (before !== 0 && Math.sign(before) !== sign) {
    account.balance += Math.min(sz, Math.abs(before)) * (px - held!.entryPx) * Math.sign(before)
  }
  if (Math.abs(after) < 1e-12) account.positions.delete(order.coin)
  else {
    const entryPx = before === 0 || Math.sign(after) !== Math.sign(before)
      ? px
      : Math.sign(before) === sign
      ? (held!.entryPx * Math.abs(before) + px * sz) / Math.abs(after)
      : held!.entryPx
    account.positions.set(order.coin, { szi: after, entryPx, leverage: setting.leverage, cross: setting.cross })
  }
  order.avgPx = order.filled === 0 ? px : (order.avgPx! * order.filled + px * sz) / (order.filled + sz)
  order.filled += sz
  account.fills.push({ oid: order.oid, coin: order.coin, px, sz, side: order.side, time: Date.now() })
}

/** The account's open orders are gone once its dead-man switch passed its time. */
const dueCancels = (account: FakeAccount) => {
  if (account.cancelAt === null || Date.now() < account.cancelAt) return
  for (const order of account.orders.values()) if (order.status === "open") order.status = "canceled"
  account.cancelAt = null
}

/**
 * Fills what the mark of `coin` reached: resting limit orders at their price, and take profits and
 * stop losses at their trigger, closing the position.
 */
const fireTriggers = (account: FakeAccount, coin: string, mark: number) => {
  dueCancels(account)
  for (const order of account.orders.values()) {
    if (order.status !== "open" || order.coin !== coin) continue
    if (order.limitPx !== null && (order.side === "buy" ? mark <= order.limitPx : mark >= order.limitPx)) {
      book(account, order, order.size - order.filled, order.limitPx)
      order.status = "filled"
      continue
    }
    if (order.trigger === null) continue
    const held = account.positions.get(coin)
    const closesLong = order.side === "sell"
    const reached = (order.trigger.kind === "sl") === closesLong ? mark <= order.trigger.px : mark >= order.trigger.px
    if (!reached) continue
    if (held !== undefined && (held.szi > 0) === closesLong) book(account, order, Math.abs(held.szi), order.trigger.px)
    order.status = held === undefined ? "canceled" : "filled"
  }
}

/**
 * Places an order on the account as a venue matches it: a trigger rests; a reduce-only order is
 * trimmed to the position (refused when there is nothing to reduce); a market order executes
 * `fillRatio` of itself at `px` (the rest expires); a limit order rests.
 */
const placeOn = (
  venue: FakeVenue,
  account: FakeAccount,
  o: {
    coin: string
    side: "buy" | "sell"
    size: number
    market: boolean
    px: number
    /** The price of a limit order (rests when the market has not reached it). */
    limitPx?: number
    cloid: string | null
    reduceOnly: boolean
    trigger: FakeOrder["trigger"]
  }
): FakeOrder | "margin" | "reduceOnly" | "immediate" => {
  dueCancels(account)
  if (venue.marginShort && !o.reduceOnly) return "margin"
  // As the venues do, a trigger the mark has already passed is refused rather than fired at once.
  if (o.trigger !== null) {
    const mark = markOf(o.coin)
    const closesLong = o.side === "sell"
    if ((o.trigger.kind === "sl") === closesLong ? mark <= o.trigger.px : mark >= o.trigger.px) return "immediate"
  }
  const held = account.positions.get(o.coin)?.szi ?? 0
  let size = o.size
  if (o.reduceOnly && o.trigger === null) {
    if (held === 0 || Math.sign(held) === (o.side === "buy" ? 1 : -1)) return "reduceOnly"
    size = Math.min(size, Math.abs(held))
  }
  const order: FakeOrder = {
    oid: nextOid++,
    coin: o.coin,
    side: o.side,
    size,
    filled: 0,
    avgPx: null,
    status: "open",
    cloid: o.cloid,
    reduceOnly: o.reduceOnly,
    trigger: o.trigger,
    limitPx: o.market || o.trigger !== null ? null : o.limitPx ?? null
  }
  account.orders.set(order.oid, order)
  if (o.market && o.trigger === null) {
    const sz = Number((size * venue.fillRatio).toFixed(8))
    if (sz > 0) book(account, order, sz, o.px)
    order.status = sz >= size ? "filled" : "canceled"
  }
  return order
}

const accountOf = (venue: FakeVenue, key: string, seed?: () => FakeAccount) => {
  let account = venue.accounts.get(key)
  if (account === undefined) {
    account = seed?.() ?? newAccount()
    venue.accounts.set(key, account)
  }
  return account
}

const byCloid = (account: FakeAccount, cloid: string) =>
  Array.from(account.orders.values()).find((o) => o.cloid === cloid)

/** The address venue1 refuses (answers 422, as it does for a malformed user). */
export const refusedAddress = `0x${"0d".repeat(20)}`

/**
 * The address a private key signs as: the key of its venue account at the fake venue1 (each agent
 * key trades a venue account of its own).
 */
export const fakeVenue1Signer = (privateKey: string) =>
  `0x${bytesToHex(keccak_256(secp256k1.getPublicKey(privateKey.slice(2), false).subarray(1)).subarray(12))}`

/** The API wallet key the fake venue1 accepts signatures from. */
export const venue1AgentKey = `0x${"5e".repeat(32)}`
const agentAddress = fakeVenue1Signer(venue1AgentKey)

/** Wallets made by `fakeVenue1Wallet`: the address, and the address of the agent key that signs for it. */
const venue1Agents = new Map<string, string>()

/** A venue1 wallet of its own (an empty venue account), accepted by every fake venue1. */
export const fakeVenue1Wallet = () => {
  const hex = (bytes: number) =>
    Array.from({ length: bytes }, () => Math.floor(Math.random() * 256).toString(16).padStart(2, "0")).join("")
  const privateKey = `0x${hex(32)}`
  const address = `0x${hex(20)}`
  venue1Agents.set(address.toLowerCase(), fakeVenue1Signer(privateKey))
  return { wallet_address: address, private_key: privateKey }
}

/** The default wallet's venue account: an ETH short, as the platform's tests expect to read. */
const seededVenue1 = (): FakeAccount => ({
  ...newAccount(),
  positions: new Map([["ETH", { szi: -2.5, entryPx: 3100, leverage: 5, cross: true }]]),
  balance: 1500.25
})

/** The venue account an `/info` request's `user` reads: its agent's. */
const venue1Account = (venue: FakeVenue, user: string) => {
  const agent = venue1Agents.get(String(user).toLowerCase()) ?? agentAddress
  return accountOf(venue, agent, agent === agentAddress ? seededVenue1 : undefined)
}

/**
 * venue1's signed `/exchange` (a testnet): checks the signer; places orders on the signer's venue
 * account (IOC ones fill at the mark + 0.5, GTC ones rest, triggers wait for their mark; a repeated cloid
 * is refused); cancels; sets leverage; arms the dead-man switch.
 */
const exchange = (body: any, clientOrderIds: Array<string>, venue: FakeVenue) => {
  const signer = recoverAddress(l1Digest(body.action, body.nonce, false), body.signature)
  if (signer !== agentAddress && !Array.from(venue1Agents.values()).includes(signer)) {
    return { key: "exchange", json: { status: "err", response: `User or API Wallet ${signer} does not exist.` } }
  }
  const account = accountOf(venue, signer, signer === agentAddress ? seededVenue1 : undefined)
  const ok = (statuses: Array<unknown>) => ({
    key: `exchange:${body.action.type}`,
    json: { status: "ok", response: { type: body.action.type, data: { statuses } } },
    order: body.action.type === "order"
  })
  switch (body.action.type) {
    case "cancel": {
      const { o } = body.action.cancels[0]
      const order = account.orders.get(o)
      if (order?.status !== "open") return ok([{ error: "Order was never placed, already canceled, or filled." }])
      order.status = "canceled"
      return ok(["success"])
    }
    case "updateLeverage": {
      const coin = coins[body.action.asset]
      if (coin === undefined) return ok([{ error: "Invalid asset" }])
      account.settings.set(coin, { leverage: body.action.leverage, cross: body.action.isCross })
      return { key: "exchange:updateLeverage", json: { status: "ok", response: { type: "default" } } }
    }
    case "scheduleCancel":
      account.cancelAt = body.action.time ?? null
      return { key: "exchange:scheduleCancel", json: { status: "ok", response: { type: "default" } } }
  }
  const wire = body.action.orders[0]
  const coin = coins[wire.a]
  if (coin === undefined) return ok([{ error: "Invalid asset" }])
  if (wire.c !== undefined && clientOrderIds.includes(wire.c)) return ok([{ error: "Duplicate cloid" }])
  const trigger = wire.t.trigger === undefined
    ? null
    : { kind: wire.t.trigger.tpsl, px: Number(wire.t.trigger.triggerPx) }
  const placed = placeOn(venue, account, {
    coin,
    side: wire.b ? "buy" : "sell",
    size: Number(wire.s),
    market: wire.t.limit?.tif === "Ioc",
    px: markOf(coin) + 0.5,
    limitPx: Number(wire.p),
    cloid: wire.c ?? null,
    reduceOnly: wire.r,
    trigger
  })
  if (placed === "margin") return ok([{ error: "Insufficient margin to place order. asset=" + wire.a }])
  if (placed === "reduceOnly") return ok([{ error: "Reduce only order would increase position. asset=" + wire.a }])
  if (placed === "immediate") return ok([{ error: "Order would immediately trigger. asset=" + wire.a }])
  // Only an order the venue took keeps its client order id.
  if (wire.c !== undefined) clientOrderIds.push(wire.c)
  if (placed.trigger !== null) return ok(["waitingForTrigger"])
  if (placed.filled > 0) {
    return ok([{ filled: { totalSz: String(placed.filled), avgPx: String(placed.avgPx), oid: 77 } }])
  }
  if (placed.status === "canceled") {
    return ok([{ error: "Order could not immediately match against any resting orders. asset=" + wire.a }])
  }
  return ok([{ resting: { oid: placed.oid } }])
}

/** A venue1 (Hyperliquid-style) server: `POST /info` and signed `POST /exchange`. */
export const startFakeVenue1 = () =>
  start(({ body, clientOrderIds, path, venue }) => {
    if (path === "/exchange") return exchange(body, clientOrderIds, venue)
    const type = String(body?.type)
    const known = (coin: unknown) => typeof coin === "string" && coin in reference
    switch (type) {
      case "allMids":
        return { key: type, json: Object.fromEntries(coins.map((c) => [c, String(markOf(c))])) }
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
              markPx: String(markOf(c) + 1),
              midPx: String(markOf(c)),
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
      case "clearinghouseState": {
        if (body.user === refusedAddress) {
          return { key: type, status: 422, json: "Failed to deserialize the JSON body into the target type" }
        }
        const account = venue1Account(venue, body.user)
        dueCancels(account)
        const held = Array.from(account.positions)
        const notional = held.reduce((sum, [c, p]) => sum + Math.abs(p.szi) * markOf(c), 0)
        const used = held.reduce((sum, [c, p]) => sum + Math.abs(p.szi) * markOf(c) / p.leverage, 0)
        return {
          key: type,
          json: {
            marginSummary: {
              accountValue: String(account.balance),
              totalNtlPos: String(notional),
              totalRawUsd: String(account.balance + notional),
              totalMarginUsed: String(used)
            },
            withdrawable: account.balance === 1500.25 ? "950.5" : String(account.balance - used),
            assetPositions: held.map(([c, p]) => ({
              type: "oneWay",
              position: {
                coin: c,
                szi: String(p.szi),
                entryPx: String(p.entryPx),
                leverage: { type: p.cross ? "cross" : "isolated", value: p.leverage }
              }
            })),
            time: 1
          }
        }
      }
      case "orderStatus": {
        const account = venue1Account(venue, body.user)
        dueCancels(account)
        const order = typeof body.oid === "string" ? byCloid(account, body.oid) : account.orders.get(body.oid)
        return {
          key: type,
          json: order === undefined ? { status: "unknownOid" } : {
            status: "order",
            order: {
              order: {
                coin: order.coin,
                side: order.side === "buy" ? "B" : "A",
                oid: order.oid,
                sz: String(order.size - order.filled),
                origSz: String(order.size),
                cloid: order.cloid
              },
              status: order.status,
              statusTimestamp: 1
            }
          }
        }
      }
      case "userFills":
        // The account's own fills, newest first, after the default wallet's history: one ordinary
        // fill, and one that liquidated this user's BTC long.
        return {
          key: type,
          json: [
            ...venue1Account(venue, body.user).fills.map((f) => ({
              coin: f.coin,
              px: String(f.px),
              sz: String(f.sz),
              side: f.side === "buy" ? "B" : "A",
              time: f.time,
              dir: "Trade",
              closedPnl: "0.0",
              oid: f.oid,
              tid: f.oid
            })).reverse(),
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

/** Key pairs made by `fakeVenue2Keys`, each an empty venue account, accepted by every fake venue2. */
const venue2Secrets = new Map<string, string>([[venue2Account.apiKey, venue2Account.secretKey]])

/** A venue2 key pair of its own (an empty venue account). */
export const fakeVenue2Keys = () => {
  const suffix = Math.random().toString(36).slice(2, 12).padEnd(10, "0")
  const keys = { api_key: `AK${suffix}abcdefXYZ`, secret_key: `SK${suffix}abcdefSECRET` }
  venue2Secrets.set(keys.api_key, keys.secret_key)
  return keys
}

/** The default key's venue account: a BTC long, as the platform's tests expect to read. */
const seededVenue2 = (): FakeAccount => ({
  ...newAccount(),
  positions: new Map([["BTC", { szi: 0.01, entryPx: 64000, leverage: 10, cross: true }]]),
  balance: 1000.5
})

const signedPaths = new Set([
  "/fapi/v1/order",
  "/fapi/v1/leverage",
  "/fapi/v1/marginType",
  "/fapi/v1/countdownCancelAll"
])

/** venue2's answer for an order: its id, status, what executed and at what average price. */
const venue2Order = (order: FakeOrder) => ({
  orderId: order.oid,
  clientOrderId: order.cloid,
  status: order.status === "open"
    ? (order.filled > 0 ? "PARTIALLY_FILLED" : "NEW")
    : order.status === "filled"
    ? "FILLED"
    : order.filled > 0
    ? "EXPIRED"
    : "CANCELED",
  executedQty: String(order.filled),
  avgPrice: order.avgPx === null ? "0.00" : String(order.avgPx)
})

/** A venue2 (Binance-futures-style) REST server, with HMAC-SHA256 signed account calls. */
export const startFakeVenue2 = () =>
  start(({ clientOrderIds, klinesCap, params, path, req, venue }) => {
    const symbol = params.get("symbol")
    const coin = symbol?.replace(/USDT$/, "")
    const listed = coin !== undefined && coin in reference
    const apiKey = String(req.headers["x-mbx-apikey"])
    const account = () => accountOf(venue, apiKey, apiKey === venue2Account.apiKey ? seededVenue2 : undefined)
    if (path.startsWith("/fapi/v2/") || signedPaths.has(path)) {
      const secret = venue2Secrets.get(apiKey)
      if (secret === undefined) {
        return { status: 401, json: { code: -2015, msg: "Invalid API-key, IP, or permissions for action." } }
      }
      const query = (req.url ?? "").split("?")[1] ?? ""
      const unsigned = query.replace(/&signature=[0-9a-f]+$/, "")
      const expected = createHmac("sha256", secret).update(unsigned).digest("hex")
      if (params.get("signature") !== expected || !params.has("timestamp")) {
        return { status: 400, json: { code: -1022, msg: "Signature for this request is not valid." } }
      }
      dueCancels(account())
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
              lastPrice: String(markOf(c)),
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
      case "/fapi/v2/balance": {
        const { balance } = account()
        return {
          json: [{
            asset: "USDT",
            balance: String(balance),
            availableBalance: balance === 1000.5 ? "800.25" : String(balance)
          }]
        }
      }
      case "/fapi/v2/positionRisk":
        return {
          json: [
            ...Array.from(account().positions, ([c, p]) => ({
              symbol: `${c}USDT`,
              positionAmt: p.szi.toFixed(3),
              entryPrice: String(p.entryPx),
              leverage: String(p.leverage),
              marginType: p.cross ? "cross" : "isolated"
            })),
            { symbol: "ETHUSDT", positionAmt: "0", entryPrice: "0", leverage: "5" }
          ].filter((row, i, all) => all.findIndex((r) => r.symbol === row.symbol) === i)
        }
      case "/fapi/v1/leverage":
        if (!listed) return invalidSymbol
        account().settings.set(coin, {
          leverage: Number(params.get("leverage")),
          cross: account().settings.get(coin)?.cross ?? true
        })
        return { json: { symbol, leverage: Number(params.get("leverage")), maxNotionalValue: "1000000" } }
      case "/fapi/v1/marginType": {
        if (!listed) return invalidSymbol
        const cross = params.get("marginType") === "CROSSED"
        const setting = account().settings.get(coin) ?? { leverage: 20, cross: true }
        if (setting.cross === cross) {
          return { status: 400, json: { code: -4046, msg: "No need to change margin type." } }
        }
        account().settings.set(coin, { ...setting, cross })
        return { json: { code: 200, msg: "success" } }
      }
      case "/fapi/v1/countdownCancelAll": {
        const countdown = Number(params.get("countdownTime"))
        account().cancelAt = countdown === 0 ? null : Date.now() + countdown
        return { json: { symbol, countdownTime: String(countdown) } }
      }
      case "/fapi/v1/order": {
        if (req.method === "DELETE") {
          const order = account().orders.get(Number(params.get("orderId")))
          if (order?.status === "open") order.status = "canceled"
          return { json: { orderId: Number(params.get("orderId")), status: "CANCELED" } }
        }
        if (req.method === "GET") {
          const order = byCloid(account(), params.get("origClientOrderId") ?? "")
          return order === undefined
            ? { status: 400, json: { code: -2013, msg: "Order does not exist." } }
            : { json: venue2Order(order) }
        }
        const clientId = params.get("newClientOrderId")
        if (clientId !== null) {
          if (clientOrderIds.includes(clientId)) {
            return { order: true, status: 400, json: { code: -4116, msg: "ClientOrderId is duplicated." } }
          }
        }
        if (!listed) return { order: true, ...invalidSymbol }
        const type = params.get("type")!
        const trigger = type === "STOP_MARKET" || type === "TAKE_PROFIT_MARKET"
          ? { kind: type === "STOP_MARKET" ? "sl" as const : "tp" as const, px: Number(params.get("stopPrice")) }
          : null
        const side = params.get("side") === "BUY" ? "buy" as const : "sell" as const
        const placed = placeOn(venue, account(), {
          coin,
          side,
          size: trigger === null ? Number(params.get("quantity")) : 0,
          market: type === "MARKET",
          px: 65010.5,
          ...(type === "LIMIT" ? { limitPx: Number(params.get("price")) } : {}),
          cloid: clientId,
          reduceOnly: params.get("reduceOnly") === "true" || params.get("closePosition") === "true",
          trigger
        })
        if (placed === "margin") {
          return { order: true, status: 400, json: { code: -2019, msg: "Margin is insufficient." } }
        }
        if (placed === "immediate") {
          return { order: true, status: 400, json: { code: -2021, msg: "Order would immediately trigger." } }
        }
        if (placed === "reduceOnly") {
          return { order: true, status: 400, json: { code: -2022, msg: "ReduceOnly Order is rejected." } }
        }
        // Only an order the venue took keeps its client order id.
        if (clientId !== null) clientOrderIds.push(clientId)
        // Without `newOrderRespType=RESULT` the answer is the acknowledgement, taken before
        // matching: NEW, nothing executed.
        const answer = params.get("newOrderRespType") === "RESULT"
          ? venue2Order(placed)
          : { ...venue2Order(placed), status: "NEW", executedQty: "0", avgPrice: "0.00" }
        // The id the platform's tests know a market order by.
        return { order: true, json: type === "MARKET" ? { ...answer, orderId: 42 } : answer }
      }
      default:
        return { status: 404, json: { code: -5000, msg: "Path not found" } }
    }
  })
