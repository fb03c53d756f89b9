import { HttpClientRequest } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import type { VenueConnection } from "../config/PlatformConfig.js"
import { UpstreamError, VenueRejected } from "../http/Errors.js"
import { toSignificant } from "../stats/Significant.js"
import { capMarginTable, defaultMarginTables, type MarginTable } from "./MarginTiers.js"
import { formatQuantity } from "./SymbolRules.js"
import { type Candle, type SymbolSpec, type Ticker, UnknownSymbol, type Venue, type VenueCredentials } from "./Venue.js"
import { clientOrderId, makeVenueClient, Num, type VenueReply, wallClock } from "./VenueHttp.js"

const AllMids = Schema.Record({ key: Schema.String, value: Num })
const MetaAndAssetCtxs = Schema.Tuple(
  Schema.Struct({
    universe: Schema.Array(
      Schema.Struct({ name: Schema.String, szDecimals: Schema.Number, maxLeverage: Schema.Number })
    )
  }),
  Schema.Array(Schema.Struct({
    funding: Num,
    openInterest: Num,
    prevDayPx: Num,
    dayNtlVlm: Num,
    markPx: Num,
    midPx: Schema.NullOr(Num)
  }))
)
const CandleSnapshot = Schema.Array(Schema.Struct({ t: Schema.Number, o: Num, h: Num, l: Num, c: Num, v: Num }))
const FundingHistory = Schema.Array(Schema.Struct({ time: Schema.Number, fundingRate: Num }))
const Level = Schema.Struct({ px: Num, sz: Num })
const L2Book = Schema.NullOr(Schema.Struct({ levels: Schema.Tuple(Schema.Array(Level), Schema.Array(Level)) }))
const RecentTrades = Schema.Array(
  Schema.Struct({ side: Schema.Literal("B", "A"), px: Num, sz: Num, time: Schema.Number })
)
const ClearinghouseState = Schema.Struct({
  marginSummary: Schema.Struct({ accountValue: Num }),
  withdrawable: Num,
  assetPositions: Schema.Array(Schema.Struct({
    position: Schema.Struct({
      coin: Schema.String,
      szi: Num,
      entryPx: Schema.NullOr(Num),
      leverage: Schema.Struct({ value: Schema.Number })
    })
  }))
})

// venue1 settles funding every hour.
const fundingInterval = 3_600_000
// A market order is an immediate-or-cancel limit this far through the mid, as venue1's SDK does.
const marketSlippage = 0.05
// venue1 refuses an order worth less than 10 USD.
const minNotional = 10

const OrderStatus = Schema.Union(
  Schema.Struct({ filled: Schema.Struct({ totalSz: Num, avgPx: Num, oid: Schema.Number }) }),
  Schema.Struct({ resting: Schema.Struct({ oid: Schema.Number }) }),
  Schema.Struct({ error: Schema.String }),
  // A trigger order accepted and waiting for its mark.
  Schema.Literal("waitingForTrigger", "waitingForFill")
)
// `orderStatus` by client order id; the venue forgets nothing it received.
const OrderLookup = Schema.Union(
  Schema.Struct({
    status: Schema.Literal("order"),
    order: Schema.Struct({
      order: Schema.Struct({ oid: Schema.Number, sz: Num, origSz: Num }),
      status: Schema.String
    })
  }),
  Schema.Struct({ status: Schema.Literal("unknownOid") })
)
const UserFills = Schema.Array(Schema.Struct({ oid: Schema.Number, px: Num, sz: Num }))
const ExchangeAnswer = Schema.Union(
  Schema.Struct({
    status: Schema.Literal("ok"),
    response: Schema.Struct({
      data: Schema.Struct({ statuses: Schema.Array(Schema.Union(OrderStatus, Schema.Literal("success"))) })
    })
  }),
  Schema.Struct({ status: Schema.Literal("err"), response: Schema.String }),
  // An action with no order in it (leverage, the dead-man switch) answers only that it was done.
  Schema.Struct({ status: Schema.Literal("ok"), response: Schema.Struct({ type: Schema.Literal("default") }) })
)

/** A price as venue1 accepts it: five significant figures, at most `6 - szDecimals` decimals. */
// Loaded at the first signed action, not at every start: msgpack (with its native extractor) and
// secp256k1 took a server's start about 15 ms, for a venue most installations never sign for.
const signing = Effect.promise(() => import("./Venue1Signing.js"))

const venuePrice = (px: number, szDecimals: number) => Number(toSignificant(px, 5).toFixed(Math.max(0, 6 - szDecimals)))

/**
 * A coin's rules from its `meta` entry: sizes in lots of 10^-szDecimals, prices at most
 * `6 - szDecimals` decimals (the finest step; see `venuePrice`), the coin's max leverage, and the
 * configured brackets capped by it.
 */
const rulesOf = (
  symbol: string,
  coin: { readonly szDecimals: number; readonly maxLeverage: number },
  margin: MarginTable
): SymbolSpec => {
  const lot = Number(`1e-${coin.szDecimals}`)
  return {
    symbol,
    tick_size: Number(`1e-${Math.max(0, 6 - coin.szDecimals)}`),
    lot_size: lot,
    min_quantity: lot,
    min_notional: minNotional,
    max_leverage: coin.maxLeverage,
    margin: capMarginTable(margin, coin.maxLeverage)
  }
}

/**
 * venue1's Hyperliquid-style API: market data and account state through `POST /info`, orders
 * through `/exchange` actions signed (EIP-712, secp256k1) with the wallet's private key.
 */
export const makeVenue1Http = (connection: VenueConnection, margin: MarginTable = defaultMarginTables.venue1) =>
  Effect.gen(function*() {
    const http = yield* makeVenueClient("venue1", connection)
    const ask = (body: Record<string, unknown>) =>
      http.send(HttpClientRequest.post(`${http.baseUrl}/info`).pipe(HttpClientRequest.bodyUnsafeJson(body)))
    const info = <A, I>(body: Record<string, unknown>, schema: Schema.Schema<A, I>) =>
      Effect.flatMap(ask(body), (reply) => http.decode(reply, schema))

    // The asset index (an order's `a`) is the position in the universe.
    const contexts = Effect.map(
      info({ type: "metaAndAssetCtxs" }, MetaAndAssetCtxs),
      ([meta, ctxs]) =>
        new Map(meta.universe.flatMap(({ maxLeverage, name, szDecimals }, asset) => {
          const ctx = ctxs[asset]
          return ctx ? [[name, { ...ctx, asset, szDecimals, maxLeverage }] as const] : []
        }))
    )

    const context = (symbol: string) =>
      Effect.flatMap(contexts, (all) => {
        const ctx = all.get(symbol)
        return ctx ? Effect.succeed(ctx) : Effect.fail(new UnknownSymbol({ symbol }))
      })

    /** An empty answer means an unlisted coin only when `allMids` does not know it either. */
    const listedOr = <A>(symbol: string, empty: A) =>
      Effect.flatMap(
        info({ type: "allMids" }, AllMids),
        (mids) => symbol in mids ? Effect.succeed(empty) : Effect.fail(new UnknownSymbol({ symbol }))
      )

    const rejected = (reply: VenueReply): Effect.Effect<never, VenueRejected> =>
      Effect.fail(new VenueRejected({ error: `venue1 refused the wallet (HTTP ${reply.status})` }))

    const wallet = (credentials: VenueCredentials) =>
      credentials.kind === "wallet" && /^0x[0-9a-fA-F]{40}$/.test(credentials.address) &&
        /^0x[0-9a-fA-F]{64}$/.test(credentials.privateKey)
        ? Effect.succeed(credentials)
        : Effect.fail(
          new VenueRejected({ error: "venue1 needs a wallet address (0x + 40 hex) and private key (0x + 64 hex)" })
        )

    const state = (credentials: VenueCredentials) =>
      Effect.flatMap(
        wallet(credentials),
        (w) =>
          Effect.flatMap(ask({ type: "clearinghouseState", user: w.address }), (reply) =>
            http.decode(reply, ClearinghouseState, rejected))
      )

    /** Signs and sends an action; answers the status of its one order or cancel. */
    const act = (credentials: VenueCredentials, action: Record<string, unknown>) =>
      Effect.gen(function*() {
        const w = yield* wallet(credentials)
        // The nonce is a wall-clock timestamp: venue1 refuses ones far from its own time.
        const nonce = wallClock.unsafeCurrentTimeMillis()
        const { signL1Action } = yield* signing
        const signature = signL1Action(action, nonce, w.privateKey, w.environment === "mainnet")
        // Sent once: the venue may have acted on an action whose answer failed, and refuses its nonce
        // (or an order's cloid) a second time; the caller looks up what happened instead.
        const reply = yield* http.send(
          HttpClientRequest.post(`${http.baseUrl}/exchange`).pipe(
            HttpClientRequest.bodyUnsafeJson({ action, nonce, signature, vaultAddress: null })
          ),
          0
        )
        const answer = yield* http.decode(reply, ExchangeAnswer, rejected)
        if (answer.status === "err") {
          return yield* new VenueRejected({ error: `venue1 refused the action: ${answer.response}` })
        }
        if (!("data" in answer.response)) return "success" as const
        const status = answer.response.data.statuses[0]
        if (status === undefined) {
          return yield* new UpstreamError({ error: "venue1 answered no status" })
        }
        if (typeof status === "object" && "error" in status) {
          return yield* new VenueRejected({ error: `venue1 refused the order: ${status.error}` })
        }
        return status
      })

    const venue: Venue = {
      exchange: "venue1",
      simulated: false,
      symbols: Effect.map(contexts, (all) => Array.from(all, ([symbol, c]) => rulesOf(symbol, c, margin))),
      tickers: Effect.map(contexts, (all) =>
        new Map(Array.from(all, ([symbol, c]): [string, Ticker] => {
          const price = c.midPx ?? c.markPx
          return [symbol, {
            symbol,
            price,
            change_24h: c.prevDayPx > 0 ? (price / c.prevDayPx - 1) * 100 : 0,
            volume_24h: c.dayNtlVlm,
            funding_rate: c.funding
          }]
        }))),
      candles: (q) =>
        info(
          {
            type: "candleSnapshot",
            req: { coin: q.symbol, interval: q.timeframe, startTime: q.start, endTime: q.end - 1 }
          },
          CandleSnapshot
        ).pipe(
          Effect.map((rows) =>
            rows.filter((r) => r.t >= q.start && r.t < q.end).map((r): Candle => ({
              time: r.t,
              open: r.o,
              high: r.h,
              low: r.l,
              close: r.c,
              volume: r.v
            }))
          ),
          Effect.flatMap((bars) => bars.length > 0 ? Effect.succeed(bars) : listedOr(q.symbol, bars))
        ),
      // Hourly payments; an unlisted coin answers an empty list, told apart as candles are.
      fundingHistory: (q) =>
        info({ type: "fundingHistory", coin: q.symbol, startTime: q.start, endTime: q.end - 1 }, FundingHistory).pipe(
          Effect.map((rows) =>
            rows.filter((r) => r.time >= q.start && r.time < q.end).map((r) => ({ time: r.time, rate: r.fundingRate }))
          ),
          Effect.flatMap((rates) => rates.length > 0 ? Effect.succeed(rates) : listedOr(q.symbol, rates))
        ),
      funding: (symbol) =>
        Effect.zipWith(context(symbol), Clock.currentTimeMillis, (c, now) => ({
          rate: c.funding,
          next_funding_time: (Math.floor(now / fundingInterval) + 1) * fundingInterval
        })),
      openInterest: (symbol) => Effect.map(context(symbol), (c) => c.openInterest),
      depth: (symbol, levels) =>
        Effect.flatMap(info({ type: "l2Book", coin: symbol }, L2Book), (book) =>
          book === null
            ? Effect.fail(new UnknownSymbol({ symbol }))
            : Effect.succeed({
              bids: book.levels[0].slice(0, levels).map((l) => [l.px, l.sz] as const),
              asks: book.levels[1].slice(0, levels).map((l) => [l.px, l.sz] as const)
            })),
      trades: (symbol, limit) =>
        info({ type: "recentTrades", coin: symbol }, RecentTrades).pipe(
          Effect.map((rows) =>
            [...rows].sort((a, b) => b.time - a.time).slice(0, limit).map((t) => ({
              time: t.time,
              price: t.px,
              size: t.sz,
              side: t.side === "B" ? "buy" as const : "sell" as const
            }))
          ),
          Effect.flatMap((trades) => trades.length > 0 ? Effect.succeed(trades) : listedOr(symbol, trades))
        ),
      checkCredentials: (credentials) => Effect.asVoid(state(credentials)),
      balances: (credentials) =>
        Effect.map(
          state(credentials),
          (s) => [{ asset: "USDC", total: s.marginSummary.accountValue, available: s.withdrawable }]
        ),
      positions: (credentials) =>
        Effect.map(
          state(credentials),
          (s) =>
            s.assetPositions.filter(({ position }) => position.szi !== 0).map(({ position }) => ({
              symbol: position.coin,
              side: position.szi > 0 ? "long" as const : "short" as const,
              size: Math.abs(position.szi),
              entry_price: position.entryPx ?? 0,
              leverage: position.leverage.value
            }))
        ),
      placeOrder: (credentials, order) =>
        Effect.gen(function*() {
          const market = yield* context(order.symbol)
          const { toWire } = yield* signing
          const buy = order.side === "buy"
          const price = order.price ?? (market.midPx ?? market.markPx) * (1 + (buy ? marketSlippage : -marketSlippage))
          const status = yield* act(credentials, {
            type: "order",
            orders: [{
              a: market.asset,
              b: buy,
              p: toWire(venuePrice(price, market.szDecimals)),
              // Down to the coin's lot, never more than asked.
              s: formatQuantity(rulesOf(order.symbol, market, margin), order.quantity),
              r: order.reduce_only === true,
              t: { limit: { tif: order.price === undefined ? "Ioc" : "Gtc" } },
              ...(order.client_order_id === undefined ? {} : { c: `0x${clientOrderId(order.client_order_id)}` })
            }],
            grouping: "na"
          })
          if (typeof status === "object" && "filled" in status) {
            return {
              order_id: String(status.filled.oid),
              status: "filled" as const,
              filled_quantity: status.filled.totalSz,
              average_price: status.filled.avgPx,
              fee: null
            }
          }
          if (typeof status === "object" && "resting" in status) {
            return {
              order_id: String(status.resting.oid),
              status: "open" as const,
              filled_quantity: 0,
              average_price: null,
              fee: null
            }
          }
          return yield* new UpstreamError({ error: "venue1 answered an order without its status" })
        }),
      cancelOrder: (credentials, order) =>
        Effect.flatMap(
          context(order.symbol),
          (market) => act(credentials, { type: "cancel", cancels: [{ a: market.asset, o: Number(order.order_id) }] })
        ).pipe(
          Effect.catchTag(
            "UnknownSymbol",
            (e) => Effect.fail(new VenueRejected({ error: `venue1 does not list ${e.symbol}` }))
          ),
          Effect.asVoid
        ),
      orderByKey: (credentials, order) =>
        Effect.gen(function*() {
          const w = yield* wallet(credentials)
          const cloid = `0x${clientOrderId(order.client_order_id)}`
          const found = yield* Effect.flatMap(
            ask({ type: "orderStatus", user: w.address, oid: cloid }),
            (reply) => http.decode(reply, OrderLookup, rejected)
          )
          if (found.status === "unknownOid") return undefined
          const { order: placed, status } = found.order
          // The status names no price: the order's fills do.
          const fills = (yield* Effect.flatMap(
            ask({ type: "userFills", user: w.address }),
            (reply) => http.decode(reply, UserFills, rejected)
          )).filter((f) => f.oid === placed.oid)
          const filled = fills.reduce((sum, f) => sum + f.sz, 0)
          // Weighted from the first fill's price, so fills at one price average to exactly that price.
          const first = fills[0]?.px ?? 0
          return {
            order_id: String(placed.oid),
            status: status === "open" || status === "triggered"
              ? "open" as const
              : status === "filled"
              ? "filled" as const
              : "cancelled" as const,
            filled_quantity: filled,
            average_price: filled > 0 ? first + fills.reduce((sum, f) => sum + (f.px - first) * f.sz, 0) / filled : null
          }
        }),
      setLeverage: (credentials, setting) =>
        Effect.flatMap(context(setting.symbol), (market) =>
          act(credentials, {
            type: "updateLeverage",
            asset: market.asset,
            isCross: setting.margin_mode === "cross",
            leverage: setting.leverage
          })).pipe(Effect.asVoid),
      // A reduce-only market trigger (`tpsl`), whose limit is the trigger price this far through.
      placeProtection: (credentials, p) =>
        Effect.gen(function*() {
          const market = yield* context(p.symbol)
          const { toWire } = yield* signing
          const buy = p.side === "buy"
          const status = yield* act(credentials, {
            type: "order",
            orders: [{
              a: market.asset,
              b: buy,
              p: toWire(
                venuePrice(p.trigger_price * (1 + (buy ? marketSlippage : -marketSlippage)), market.szDecimals)
              ),
              s: formatQuantity(rulesOf(p.symbol, market, margin), p.quantity),
              r: true,
              t: {
                trigger: {
                  isMarket: true,
                  triggerPx: toWire(venuePrice(p.trigger_price, market.szDecimals)),
                  tpsl: p.kind === "take_profit" ? "tp" : "sl"
                }
              },
              c: `0x${clientOrderId(p.client_order_id)}`
            }],
            grouping: "na"
          })
          if (typeof status === "object" && "resting" in status) return String(status.resting.oid)
          const placed = yield* venue.orderByKey(credentials, p)
          return placed === undefined
            ? yield* new UpstreamError({ error: "venue1 accepted a trigger order it does not know" })
            : placed.order_id
        }),
      // venue1's switch cancels every open order of the account at once, whatever the symbol.
      cancelAllAfter: (credentials, arm) =>
        act(
          credentials,
          arm.deadline === null ? { type: "scheduleCancel" } : { type: "scheduleCancel", time: arm.deadline }
        )
          .pipe(Effect.asVoid)
    }
    return venue
  })
