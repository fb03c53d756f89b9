import { Clock, Effect, Ref, Schema } from "effect"
import { tradingDefaults } from "../accounts/TradingDefaults.js"
import { VenueRejected } from "../http/Errors.js"
import { capMarginTable, defaultMarginTables, type MarginTable } from "./MarginTiers.js"
import { defaultSimulationCorrelation, type SimulatedSymbol, simulatedSymbol, universe } from "./SimulatedMarket.js"
import { decimalString, formatQuantity } from "./SymbolRules.js"
import {
  type Exchange,
  type OrderResult,
  type Position,
  type ProtectionRequest,
  type SymbolSpec,
  type Ticker,
  UnknownSymbol,
  type Venue,
  type VenueCredentials,
  type VenueOrder
} from "./Venue.js"
import { Venue1Address, Venue1PrivateKey, Venue2Key } from "./VenueAccount.js"

/** Paper trading costs, as fractions of notional: the same as a backtest's (`tradingDefaults`). */
export const paperFeeRate = tradingDefaults.feeRate
export const paperSlippage = tradingDefaults.slippage
export const paperStartingCash = tradingDefaults.initialBalance

interface PaperAccount {
  readonly cash: number
  /** Signed size (negative is short) and average entry price per symbol. */
  readonly positions: ReadonlyMap<string, { readonly size: number; readonly entry: number }>
  /** Resting orders by order id; a take profit or stop loss carries its trigger. */
  readonly openOrders: ReadonlyMap<string, { readonly symbol: string; readonly protection?: ProtectionRequest }>
  /** Every order by its client order id, as the venue reports it. */
  readonly byKey: ReadonlyMap<string, VenueOrder>
  readonly leverage: ReadonlyMap<string, number>
  /** When the dead-man switch cancels the open orders, if armed. */
  readonly cancelAt: number | null
  readonly nextOrder: number
}

const emptyAccount: PaperAccount = {
  cash: paperStartingCash,
  positions: new Map(),
  openOrders: new Map(),
  byKey: new Map(),
  leverage: new Map(),
  cancelAt: null,
  nextOrder: 1
}

const isAddress = Schema.is(Venue1Address)
const isPrivateKey = Schema.is(Venue1PrivateKey)
const isVenue2Key = Schema.is(Venue2Key)

// The formats of the contract (`VenueAccount.ts`): what the API accepts, the simulation accepts.
const wellFormed = (c: VenueCredentials) =>
  c.kind === "wallet"
    ? isAddress(c.address) && isPrivateKey(c.privateKey)
    : isVenue2Key(c.apiKey) && isVenue2Key(c.secretKey)

const identity = (c: VenueCredentials) => c.kind === "wallet" ? c.address.toLowerCase() : c.apiKey

/** Applies a fill to a paper account: fee from cash, realized PnL into cash, average entry kept. */
const applyFill = (
  account: PaperAccount,
  symbol: string,
  signedSize: number,
  price: number,
  fee: number
): PaperAccount => {
  const held = account.positions.get(symbol) ?? { size: 0, entry: 0 }
  const size = held.size + signedSize
  let entry: number
  let realized = 0
  if (held.size === 0 || Math.sign(signedSize) === Math.sign(held.size)) {
    entry = (held.entry * Math.abs(held.size) + price * Math.abs(signedSize)) / Math.abs(size)
  } else {
    realized = Math.min(Math.abs(signedSize), Math.abs(held.size)) * (price - held.entry) * Math.sign(held.size)
    // A reduced position keeps its entry; a flipped one starts at this fill.
    entry = Math.sign(size) === Math.sign(held.size) ? held.entry : price
  }
  const positions = new Map(account.positions)
  if (size === 0) positions.delete(symbol)
  else positions.set(symbol, { size, entry })
  return { ...account, cash: account.cash + realized - fee, positions }
}

/** The simulation's minimum notional of an order: venue1's (Hyperliquid's) 10 USD, venue2's (Binance's) 5. */
export const simulatedMinNotional: Record<Exchange, number> = { venue1: 10, venue2: 5 }

/**
 * A simulated symbol's rules from its reference price: a tick of about a hundred-thousandth of the
 * price and a lot worth 1 to 10 USD, each a power of ten; the venue's minimum notional; the
 * configured brackets, whose first sets the leverage cap.
 */
export const simulatedRules = (exchange: Exchange, symbol: string, price: number, margin: MarginTable): SymbolSpec => {
  const lot = Number(`1e${Math.ceil(-Math.log10(price))}`)
  const maxLeverage = margin.tiers[0]!.max_leverage
  return {
    symbol,
    tick_size: Number(`1e${Math.floor(Math.log10(price / 100_000))}`),
    lot_size: lot,
    min_quantity: lot,
    min_notional: simulatedMinNotional[exchange],
    max_leverage: maxLeverage,
    margin: capMarginTable(margin, maxLeverage)
  }
}

/**
 * The deterministic venue: the market is a pure function of seed, correlation, symbol and time (see
 * `SimulatedMarket`), and orders fill on paper against it with fees and slippage. Paper accounts
 * live in memory and start with 10 000 USD.
 */
export const makeSimulatedVenue = (
  exchange: Exchange,
  seed: number,
  correlation = defaultSimulationCorrelation,
  margin: MarginTable = defaultMarginTables[exchange]
) =>
  Effect.gen(function*() {
    const rules = new Map(
      Object.entries(universe).map(([symbol, price]) => [symbol, simulatedRules(exchange, symbol, price, margin)])
    )
    const markets = new Map(
      Object.keys(universe).map((s) => [s, simulatedSymbol(seed, s, exchange, correlation)!] as const)
    )
    const paper = yield* Ref.make(new Map<string, PaperAccount>())

    const market = (symbol: string) => {
      const found = markets.get(symbol)
      return found ? Effect.succeed(found) : Effect.fail(new UnknownSymbol({ symbol }))
    }
    const withMarket = <A>(symbol: string, f: (m: SimulatedSymbol, now: number) => A) =>
      Effect.zipWith(market(symbol), Clock.currentTimeMillis, f)

    const authorized = (credentials: VenueCredentials) =>
      wellFormed(credentials)
        ? Effect.void
        : Effect.fail(new VenueRejected({ error: `${exchange} rejected the credentials` }))

    /**
     * The account as it is at `now`: the dead-man switch, once its deadline passed, has cancelled
     * the open orders, and a take profit or stop loss the mark has reached has closed its position
     * at its trigger price (checked when the account is next used, against the mark then).
     */
    const settled = (a: PaperAccount, now: number): PaperAccount => {
      let out: PaperAccount = a.cancelAt !== null && now >= a.cancelAt
        ? { ...a, openOrders: new Map(), cancelAt: null }
        : a
      for (const [id, order] of out.openOrders) {
        const p = order.protection
        const held = out.positions.get(order.symbol)
        if (p === undefined || held === undefined) continue
        const mark = markets.get(order.symbol)!.price(now)
        const closesLong = p.side === "sell"
        const reached = (p.kind === "stop_loss") === closesLong ? mark <= p.trigger_price : mark >= p.trigger_price
        if (!reached || (held.size > 0) !== closesLong) continue
        const size = Math.abs(held.size)
        const openOrders = new Map(out.openOrders)
        openOrders.delete(id)
        out = applyFill(
          { ...out, openOrders },
          order.symbol,
          -held.size,
          p.trigger_price,
          size * p.trigger_price * paperFeeRate
        )
        out = {
          ...out,
          byKey: new Map(out.byKey).set(p.client_order_id, {
            order_id: id,
            status: "filled",
            filled_quantity: size,
            average_price: p.trigger_price
          })
        }
      }
      return out
    }

    /** Reads and updates the account at the clock's time. */
    const modifyAccount = <A>(credentials: VenueCredentials, f: (a: PaperAccount, now: number) => [A, PaperAccount]) =>
      Effect.zipRight(
        authorized(credentials),
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Ref.modify(paper, (all): [A, Map<string, PaperAccount>] => {
            const [out, after] = f(settled(all.get(identity(credentials)) ?? emptyAccount, now), now)
            return [out, new Map(all).set(identity(credentials), after)]
          }))
      )

    const account = (credentials: VenueCredentials) => modifyAccount(credentials, (a) => [a, a])

    const tickers = Effect.map(Clock.currentTimeMillis, (now) =>
      new Map(
        Array.from(
          markets.values(),
          (m): [string, Ticker] => [m.symbol, { symbol: m.symbol, ...m.day(now), funding_rate: m.funding(now).rate }]
        )
      ))

    const placeOrder = (credentials: VenueCredentials, order: Parameters<Venue["placeOrder"]>[1]) =>
      Effect.gen(function*() {
        yield* authorized(credentials)
        const m = yield* market(order.symbol)
        // As a real venue: a quantity off the lot, or under the minimum, is refused.
        const spec = rules.get(order.symbol)!
        if (
          formatQuantity(spec, order.quantity) !== decimalString(order.quantity) || order.quantity < spec.min_quantity
        ) {
          return yield* new VenueRejected({
            error: `${exchange} refuses a quantity of ${decimalString(order.quantity)} ${order.symbol}: it must be a ` +
              `multiple of ${decimalString(spec.lot_size)} and at least ${decimalString(spec.min_quantity)}`
          })
        }
        const mark = m.price(yield* Clock.currentTimeMillis)
        const direction = order.side === "buy" ? 1 : -1
        const fillPrice = mark * (1 + direction * paperSlippage)
        const marketable = order.price === undefined || direction * (order.price - fillPrice) >= 0
        const placed = yield* modifyAccount(credentials, (before): [OrderResult | string, PaperAccount] => {
          const held = before.positions.get(order.symbol)?.size ?? 0
          // A reduce-only order shrinks the position, never past flat.
          const quantity = order.reduce_only === true ? Math.min(order.quantity, Math.abs(held)) : order.quantity
          if (order.reduce_only === true && (held === 0 || Math.sign(held) === direction)) {
            return [
              `${exchange} refuses a reduce-only order that would not reduce the ${order.symbol} position`,
              before
            ]
          }
          const order_id = `${exchange}-${before.nextOrder}`
          const numbered = { ...before, nextOrder: before.nextOrder + 1 }
          const keyed = (a: PaperAccount, known: VenueOrder) =>
            order.client_order_id === undefined
              ? a
              : { ...a, byKey: new Map(a.byKey).set(order.client_order_id, known) }
          if (!marketable) {
            const resting = {
              ...numbered,
              openOrders: new Map(numbered.openOrders).set(order_id, { symbol: order.symbol })
            }
            return [
              { order_id, status: "open", filled_quantity: 0, average_price: null, fee: 0 },
              keyed(resting, { order_id, status: "open", filled_quantity: 0, average_price: null })
            ]
          }
          const fee = quantity * fillPrice * paperFeeRate
          const after = applyFill(numbered, order.symbol, direction * quantity, fillPrice, fee)
          return [
            { order_id, status: "filled", filled_quantity: quantity, average_price: fillPrice, fee },
            keyed(after, { order_id, status: "filled", filled_quantity: quantity, average_price: fillPrice })
          ]
        })
        return typeof placed === "string" ? yield* new VenueRejected({ error: placed }) : placed
      })

    const cancelOrder = (
      credentials: VenueCredentials,
      order: { readonly symbol: string; readonly order_id: string }
    ) =>
      Effect.flatMap(
        modifyAccount(credentials, (current): [boolean, PaperAccount] => {
          if (!current.openOrders.has(order.order_id)) return [false, current]
          const openOrders = new Map(current.openOrders)
          openOrders.delete(order.order_id)
          return [true, { ...current, openOrders }]
        }),
        (found) =>
          found
            ? Effect.void
            : Effect.fail(new VenueRejected({ error: `${exchange} has no open order ${order.order_id}` }))
      )

    const placeProtection = (credentials: VenueCredentials, protection: ProtectionRequest) =>
      Effect.zipRight(
        market(protection.symbol),
        modifyAccount(credentials, (current): [string, PaperAccount] => {
          const order_id = `${exchange}-${current.nextOrder}`
          return [order_id, {
            ...current,
            nextOrder: current.nextOrder + 1,
            openOrders: new Map(current.openOrders).set(order_id, { symbol: protection.symbol, protection }),
            byKey: new Map(current.byKey).set(protection.client_order_id, {
              order_id,
              status: "open",
              filled_quantity: 0,
              average_price: null
            })
          }]
        })
      )

    const positions = (credentials: VenueCredentials) =>
      Effect.map(account(credentials), (a) =>
        Array.from(a.positions, ([symbol, p]): Position => ({
          symbol,
          side: p.size > 0 ? "long" : "short",
          size: Math.abs(p.size),
          entry_price: p.entry,
          leverage: a.leverage.get(symbol) ?? 1
        })))

    const balances = (credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const a = yield* account(credentials)
        const now = yield* Clock.currentTimeMillis
        let unrealized = 0
        for (const [symbol, p] of a.positions) unrealized += p.size * (markets.get(symbol)!.price(now) - p.entry)
        return [{ asset: "USD", total: a.cash + unrealized, available: a.cash }]
      })

    const symbols = Effect.succeed(Array.from(rules.values()))

    return {
      exchange,
      simulated: true,
      symbols,
      tickers,
      candles: (q) => withMarket(q.symbol, (m, now) => m.candles(q.timeframe, q.start, q.end, now)),
      funding: (symbol) => withMarket(symbol, (m, now) => m.funding(now)),
      fundingHistory: (q) => withMarket(q.symbol, (m, now) => m.fundingHistory(q.start, Math.min(q.end, now + 1))),
      openInterest: (symbol) => withMarket(symbol, (m, now) => m.openInterest(now)),
      depth: (symbol, levels) => withMarket(symbol, (m, now) => m.depth(now, levels)),
      trades: (symbol, limit) => withMarket(symbol, (m, now) => m.trades(now, limit)),
      checkCredentials: authorized,
      balances,
      positions,
      placeOrder,
      cancelOrder,
      orderByKey: (credentials, order) => Effect.map(account(credentials), (a) => a.byKey.get(order.client_order_id)),
      setLeverage: (credentials, setting) =>
        Effect.zipRight(
          market(setting.symbol),
          modifyAccount(credentials, (a) => [undefined, {
            ...a,
            leverage: new Map(a.leverage).set(setting.symbol, setting.leverage)
          }])
        ),
      placeProtection,
      cancelAllAfter: (credentials, arm) =>
        modifyAccount(credentials, (a) => [undefined, { ...a, cancelAt: arm.deadline }])
    } satisfies Venue
  })
