import { HttpClientRequest } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { createHmac } from "node:crypto"
import type { VenueConnection } from "../config/PlatformConfig.js"
import { type UpstreamError, VenueRejected } from "../http/Errors.js"
import { capMarginTable, defaultMarginTables, type MarginTable } from "./MarginTiers.js"
import { decimalString } from "./SymbolRules.js"
import {
  type Candle,
  type FundingRate,
  type SymbolSpec,
  type Ticker,
  timeframeMillis,
  UnknownSymbol,
  type Venue,
  type VenueCredentials
} from "./Venue.js"
import { clientOrderId, makeVenueClient, Num, type VenueReply, wallClock } from "./VenueHttp.js"

const quote = "USDT"
const pair = (symbol: string) => `${symbol}${quote}`
const coin = (pairName: string) => pairName.endsWith(quote) ? pairName.slice(0, -quote.length) : undefined

const Ticker24h = Schema.Array(Schema.Struct({
  symbol: Schema.String,
  lastPrice: Num,
  priceChangePercent: Num,
  quoteVolume: Num
}))
const PremiumIndex = Schema.Struct({ symbol: Schema.String, lastFundingRate: Num, nextFundingTime: Schema.Number })
const Filter = Schema.Struct({
  filterType: Schema.String,
  tickSize: Schema.optional(Num),
  stepSize: Schema.optional(Num),
  minQty: Schema.optional(Num),
  notional: Schema.optional(Num),
  minNotional: Schema.optional(Num)
})
type Filter = typeof Filter.Type
const ExchangeInfo = Schema.Struct({
  symbols: Schema.Array(Schema.Struct({ symbol: Schema.String, filters: Schema.Array(Filter) }))
})
const OpenInterest = Schema.Struct({ openInterest: Num })
// [openTime, open, high, low, close, volume, closeTime, ...]
const Klines = Schema.Array(
  Schema.Tuple([Schema.Number, Num, Num, Num, Num, Num], Schema.Unknown)
)
const FundingRates = Schema.Array(Schema.Struct({ fundingTime: Schema.Number, fundingRate: Num }))
const Depth = Schema.Struct({ bids: Schema.Array(Schema.Tuple(Num, Num)), asks: Schema.Array(Schema.Tuple(Num, Num)) })
const Trades = Schema.Array(Schema.Struct({ price: Num, qty: Num, time: Schema.Number, isBuyerMaker: Schema.Boolean }))
const BalanceRows = Schema.Array(Schema.Struct({ asset: Schema.String, balance: Num, availableBalance: Num }))
const PositionRisk = Schema.Array(
  Schema.Struct({ symbol: Schema.String, positionAmt: Num, entryPrice: Num, leverage: Num })
)
// The full answer (`newOrderRespType=RESULT`): without it a market order answers as it was
// acknowledged, NEW with nothing executed, however it filled.
const OrderAnswer = Schema.Struct({ orderId: Schema.Number, status: Schema.String, executedQty: Num, avgPrice: Num })
const OrderQuery = Schema.Struct({ orderId: Schema.Number, status: Schema.String, executedQty: Num, avgPrice: Num })
const PlacedOrder = Schema.Struct({ orderId: Schema.Number })
const ErrorBody = Schema.parseJson(Schema.Struct({ code: Schema.Number, msg: Schema.String }))

// Binance-style error codes: unknown symbol; and key, permission or signature refused.
const invalidSymbol = -1121
const refusedKey = new Set([-2014, -2015, -1022, -2008])
// The order is not known to the venue (never received, or archived long ago).
const unknownOrder = -2013
// The margin mode asked for is the one set already.
const marginModeUnchanged = -4046
const pageSize = 1500

/**
 * A pair's rules from its exchangeInfo filters: PRICE_FILTER's tick; the coarser step and the
 * larger minimum of LOT_SIZE and MARKET_LOT_SIZE (an order may be either); MIN_NOTIONAL's notional
 * (none when absent). The leverage cap is the configured brackets': per-pair brackets need a
 * signed call (`leverageBracket`), so the table stands for every pair.
 */
const rulesOf = (symbol: string, filters: ReadonlyArray<Filter>, margin: MarginTable): SymbolSpec | undefined => {
  const of = (type: string) => filters.find((f) => f.filterType === type)
  const tick = of("PRICE_FILTER")?.tickSize
  const lots = [of("LOT_SIZE"), of("MARKET_LOT_SIZE")]
  const steps = lots.flatMap((f) => f?.stepSize !== undefined && f.stepSize > 0 ? [f.stepSize] : [])
  if (tick === undefined || steps.length === 0) return undefined
  const notional = of("MIN_NOTIONAL")
  const maxLeverage = margin.tiers[0]!.max_leverage
  return {
    symbol,
    tick_size: tick,
    lot_size: Math.max(...steps),
    min_quantity: Math.max(0, ...lots.flatMap((f) => f?.minQty === undefined ? [] : [f.minQty])),
    min_notional: notional?.notional ?? notional?.minNotional ?? 0,
    max_leverage: maxLeverage,
    margin: capMarginTable(margin, maxLeverage)
  }
}

/** An order still on the book, with a part or nothing executed. */
const openStatus = new Set(["NEW", "PARTIALLY_FILLED"])

/** venue2's order statuses as the platform's: on the book, done whole, or done with what executed (perhaps nothing). */
const orderStatus = (status: string) =>
  openStatus.has(status) ? "open" as const : status === "FILLED" ? "filled" as const : "cancelled" as const

/**
 * venue2's Binance-futures-style REST API. Account calls are signed with HMAC-SHA256 over the query
 * string and carry the key in `X-MBX-APIKEY`; their `timestamp` is wall-clock time, as the venue
 * compares it with its own clock.
 */
export const makeVenue2Http = (connection: VenueConnection, margin: MarginTable = defaultMarginTables.venue2) =>
  Effect.gen(function*() {
    const http = yield* makeVenueClient("venue2", connection)

    const errorOf = (reply: VenueReply) => Option.getOrUndefined(Schema.decodeUnknownOption(ErrorBody)(reply.text))

    /** A refused public call: -1121 is a symbol the venue does not list. */
    const unlisted = (symbol: string) => (reply: VenueReply): Effect.Effect<never, UnknownSymbol | UpstreamError> =>
      errorOf(reply)?.code === invalidSymbol ? Effect.fail(new UnknownSymbol({ symbol })) : http.unexpected(reply)

    /** A refused account call: the key, its permissions or the signature, or the request itself. */
    const refused = (reply: VenueReply): Effect.Effect<never, VenueRejected> => {
      const body = errorOf(reply)
      const what = reply.status === 401 || (body !== undefined && refusedKey.has(body.code))
        ? "the API key"
        : "the request"
      return Effect.fail(
        new VenueRejected({ error: `venue2 refused ${what}${body ? `: ${body.msg}` : ` (HTTP ${reply.status})`}` })
      )
    }

    const get = (path: string, params: Record<string, string | number>) =>
      http.send(HttpClientRequest.get(`${http.baseUrl}${path}`, { urlParams: params }))

    const signed = <A, I>(
      method: "GET" | "POST" | "DELETE",
      path: string,
      credentials: VenueCredentials,
      params: Record<string, string | number>,
      schema: Schema.Schema<A, I>,
      retries?: number,
      otherwise: (reply: VenueReply) => Effect.Effect<A, VenueRejected | UpstreamError> = refused
    ) =>
      credentials.kind !== "apiKey"
        ? Effect.fail(new VenueRejected({ error: "venue2 needs an API key and secret" }))
        : Effect.gen(function*() {
          const query = new URLSearchParams({ ...params, timestamp: String(wallClock.unsafeCurrentTimeMillis()) })
            .toString()
          const signature = createHmac("sha256", credentials.secretKey).update(query).digest("hex")
          const request = HttpClientRequest.make(method)(`${http.baseUrl}${path}?${query}&signature=${signature}`).pipe(
            HttpClientRequest.setHeader("X-MBX-APIKEY", credentials.apiKey)
          )
          return yield* http.decode(yield* http.send(request, retries), schema, otherwise)
        })

    /** A symbol-level call: the venue answers -1121 for a symbol it does not list. */
    const bySymbol = <A, I>(
      path: string,
      symbol: string,
      params: Record<string, string | number>,
      schema: Schema.Schema<A, I>
    ) =>
      Effect.flatMap(
        get(path, { symbol: pair(symbol), ...params }),
        (reply) => http.decode(reply, schema, unlisted(symbol))
      )

    /** The USDT pairs' rules, by coin. */
    const rules = Effect.map(
      Effect.flatMap(get("/fapi/v1/exchangeInfo", {}), (reply) => http.decode(reply, ExchangeInfo)),
      (info) =>
        new Map(info.symbols.flatMap((s) => {
          const symbol = coin(s.symbol)
          const found = symbol === undefined ? undefined : rulesOf(symbol, s.filters, margin)
          return found === undefined ? [] : [[found.symbol, found] as const]
        }))
    )

    const candles: Venue["candles"] = (q) =>
      Effect.gen(function*() {
        const out: Array<Candle> = []
        for (let from = q.start; from < q.end;) {
          const page = yield* bySymbol("/fapi/v1/klines", q.symbol, {
            interval: q.timeframe,
            startTime: from,
            endTime: q.end - 1,
            limit: pageSize
          }, Klines)
          for (const [time, open, high, low, close, volume] of page) {
            if (time >= q.start && time < q.end) {
              out.push({ time, open, high, low, close, volume })
            }
          }
          // A venue may cap a page below what was asked: only an empty page, or one that reaches the
          // end, says there is nothing more.
          const last = page.at(-1)?.[0]
          if (last === undefined || last + timeframeMillis[q.timeframe] >= q.end) {
            break
          }
          from = last + 1
        }
        return out
      })

    /** `/fapi/v1/fundingRate` answers up to 1000 payments a page, oldest first. */
    const fundingHistory: Venue["fundingHistory"] = (q) =>
      Effect.gen(function*() {
        const out: Array<FundingRate> = []
        for (let from = q.start; from < q.end;) {
          const page = yield* bySymbol("/fapi/v1/fundingRate", q.symbol, {
            startTime: from,
            endTime: q.end - 1,
            limit: 1000
          }, FundingRates)
          for (const r of page) {
            if (r.fundingTime >= q.start && r.fundingTime < q.end) {
              out.push({ time: r.fundingTime, rate: r.fundingRate })
            }
          }
          const last = page.at(-1)?.fundingTime
          if (last === undefined || last + 1 >= q.end) {
            break
          }
          from = last + 1
        }
        return out
      })

    return {
      exchange: "venue2",
      simulated: false,
      symbols: Effect.map(rules, (all) => Array.from(all.values())),
      tickers: Effect.zipWith(
        Effect.flatMap(get("/fapi/v1/ticker/24hr", {}), (reply) => http.decode(reply, Ticker24h)),
        Effect.flatMap(get("/fapi/v1/premiumIndex", {}), (reply) => http.decode(reply, Schema.Array(PremiumIndex))),
        (tickers, premiums) => {
          const funding = new Map(premiums.map((p) => [p.symbol, p.lastFundingRate]))
          return new Map(tickers.flatMap((t): Array<[string, Ticker]> => {
            const symbol = coin(t.symbol)
            return symbol === undefined ? [] : [[symbol, {
              symbol,
              price: t.lastPrice,
              change_24h: t.priceChangePercent,
              volume_24h: t.quoteVolume,
              funding_rate: funding.get(t.symbol) ?? 0
            }]]
          }))
        },
        { concurrent: true }
      ),
      candles,
      fundingHistory,
      funding: (symbol) =>
        Effect.map(bySymbol("/fapi/v1/premiumIndex", symbol, {}, PremiumIndex), (p) => ({
          rate: p.lastFundingRate,
          next_funding_time: p.nextFundingTime
        })),
      openInterest: (symbol) =>
        Effect.map(bySymbol("/fapi/v1/openInterest", symbol, {}, OpenInterest), (o) => o.openInterest),
      depth: (symbol, levels) =>
        Effect.map(bySymbol("/fapi/v1/depth", symbol, { limit: levels }, Depth), (book) => ({
          bids: book.bids.slice(0, levels),
          asks: book.asks.slice(0, levels)
        })),
      trades: (symbol, limit) =>
        Effect.map(
          bySymbol("/fapi/v1/trades", symbol, { limit }, Trades),
          (rows) =>
            [...rows].sort((a, b) => b.time - a.time).slice(0, limit).map((t) => ({
              time: t.time,
              price: t.price,
              size: t.qty,
              // The taker sold into a resting buy when the buyer was the maker.
              side: t.isBuyerMaker ? "sell" as const : "buy" as const
            }))
        ),
      checkCredentials: (credentials) =>
        Effect.asVoid(signed("GET", "/fapi/v2/account", credentials, {}, Schema.Unknown)),
      balances: (credentials) =>
        Effect.map(
          signed("GET", "/fapi/v2/balance", credentials, {}, BalanceRows),
          (rows) => rows.map((b) => ({ asset: b.asset, total: b.balance, available: b.availableBalance }))
        ),
      positions: (credentials) =>
        Effect.map(
          signed("GET", "/fapi/v2/positionRisk", credentials, {}, PositionRisk),
          (rows) =>
            rows.filter((p) => p.positionAmt !== 0).flatMap((p) => {
              const symbol = coin(p.symbol)
              return symbol === undefined ? [] : [{
                symbol,
                side: p.positionAmt > 0 ? "long" as const : "short" as const,
                size: Math.abs(p.positionAmt),
                entry_price: p.entryPrice,
                leverage: p.leverage
              }]
            })
        ),
      // Not repeated on a failure: venue2 would take the same signed order twice. Quantity and
      // price go as plain decimals (the caller has put them on the pair's lot and tick): venue2
      // refuses an exponent or a digit past its precision.
      placeOrder: (credentials, order) =>
        signed(
          "POST",
          "/fapi/v1/order",
          credentials,
          {
            symbol: pair(order.symbol),
            side: order.side.toUpperCase(),
            quantity: decimalString(order.quantity),
            ...(order.client_order_id === undefined ? {} : { newClientOrderId: clientOrderId(order.client_order_id) }),
            ...(order.reduce_only === true ? { reduceOnly: "true" } : {}),
            ...(order.price === undefined
              ? { type: "MARKET" }
              : { type: "LIMIT", price: decimalString(order.price), timeInForce: "GTC" }),
            newOrderRespType: "RESULT"
          },
          OrderAnswer,
          0
        ).pipe(
          // FILLED, or done (EXPIRED, CANCELED) with what executed: that part is all that fills.
          Effect.flatMap((a) =>
            openStatus.has(a.status) || a.status === "FILLED" || a.executedQty > 0
              ? Effect.succeed({
                order_id: String(a.orderId),
                status: openStatus.has(a.status) ? "open" as const : "filled" as const,
                filled_quantity: a.executedQty,
                average_price: a.executedQty > 0 ? a.avgPrice : null,
                fee: null
              })
              : Effect.fail(
                new VenueRejected({ error: `venue2 executed none of order ${a.orderId}: its status is ${a.status}` })
              )
          )
        ),
      cancelOrder: (credentials, order) =>
        Effect.asVoid(
          signed(
            "DELETE",
            "/fapi/v1/order",
            credentials,
            { symbol: pair(order.symbol), orderId: order.order_id },
            Schema.Unknown
          )
        ),
      orderByKey: (credentials, order) =>
        signed(
          "GET",
          "/fapi/v1/order",
          credentials,
          { symbol: pair(order.symbol), origClientOrderId: clientOrderId(order.client_order_id) },
          Schema.NullOr(OrderQuery),
          undefined,
          (reply) => errorOf(reply)?.code === unknownOrder ? Effect.succeed(null) : refused(reply)
        ).pipe(Effect.map((a) =>
          a === null ? undefined : {
            order_id: String(a.orderId),
            status: orderStatus(a.status),
            filled_quantity: a.executedQty,
            average_price: a.executedQty > 0 ? a.avgPrice : null
          }
        )),
      setLeverage: (credentials, setting) =>
        Effect.zipRight(
          signed(
            "POST",
            "/fapi/v1/marginType",
            credentials,
            { symbol: pair(setting.symbol), marginType: setting.margin_mode === "cross" ? "CROSSED" : "ISOLATED" },
            Schema.Unknown,
            undefined,
            (reply) => errorOf(reply)?.code === marginModeUnchanged ? Effect.succeed(null) : refused(reply)
          ),
          signed(
            "POST",
            "/fapi/v1/leverage",
            credentials,
            { symbol: pair(setting.symbol), leverage: setting.leverage },
            Schema.Unknown
          )
        ).pipe(Effect.asVoid),
      // A market order once the mark price reaches the trigger, closing whatever the position is then.
      placeProtection: (credentials, p) =>
        signed(
          "POST",
          "/fapi/v1/order",
          credentials,
          {
            symbol: pair(p.symbol),
            side: p.side.toUpperCase(),
            type: p.kind === "take_profit" ? "TAKE_PROFIT_MARKET" : "STOP_MARKET",
            stopPrice: decimalString(p.trigger_price),
            closePosition: "true",
            workingType: "MARK_PRICE",
            newClientOrderId: clientOrderId(p.client_order_id)
          },
          PlacedOrder,
          0
        ).pipe(Effect.map((a) => String(a.orderId))),
      // venue2's countdown is per symbol; 0 stops it.
      cancelAllAfter: (credentials, arm) =>
        Effect.forEach(
          arm.symbols,
          (symbol) =>
            signed("POST", "/fapi/v1/countdownCancelAll", credentials, {
              symbol: pair(symbol),
              countdownTime: arm.deadline === null
                ? 0
                : Math.max(1, arm.deadline - wallClock.unsafeCurrentTimeMillis())
            }, Schema.Unknown),
          { discard: true }
        )
    } satisfies Venue
  })
