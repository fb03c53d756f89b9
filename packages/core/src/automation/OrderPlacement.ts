import { Clock, Data, Effect, Option } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { UpstreamError } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { MarketData } from "../market/MarketData.js"
import {
  entryPrice,
  entryReached,
  exitPrice,
  feeOf,
  paperTerms,
  takerPrice,
  type TradingTerms
} from "../trading/Fills.js"
import { liquidationFee, sizeOrder } from "../trading/Ledger.js"
import { checkOrder, roundPrice, roundQuantity } from "../venues/SymbolRules.js"
import { type Exchange, type Ticker, type VenueCredentials, type VenueFailure, Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import type { BindingId } from "./Automation.js"
import { LedgerRepo, type OrderRow, type PositionRow, type VenueProtection } from "./LedgerRepo.js"
import { ReconcileRequests } from "./ReconcileRequests.js"
import { ReconciliationRepo } from "./ReconciliationRepo.js"
import { refusalText, RiskFirewall, type Settle } from "./RiskFirewall.js"
import { decisionsOf, RunsRepo } from "./RunsRepo.js"

/** A run or an order ends for a reason that trying again would not change (the program, a rule, a venue that may have it). */
export class FinalFailure extends Data.TaggedError("FinalFailure")<{ readonly message: string }> {}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const hour = 3_600_000

/**
 * Fills recorded orders, those of runs and the exits of positions: on paper against the venue's
 * price, or through the venue's API (`route: venue`) with the order's key as the client order id.
 * An order that may have reached the venue is never sent again. Also the watcher of take profits
 * and stop losses, which closes a position once its mark reaches either.
 */
export class OrderPlacement extends Effect.Service<OrderPlacement>()("@trading-platform/core/OrderPlacement", {
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo
    const venues = yield* Venues
    const venueAccounts = yield* VenueAccounts
    const market = yield* MarketData
    const runs = yield* RunsRepo
    const firewall = yield* RiskFirewall
    const reconcileRequests = yield* ReconcileRequests
    const reconciliations = yield* ReconciliationRepo

    /** A symbol's rules as its venue states them (cached per venue by market data); undefined when it is not listed. */
    const rulesOf = (exchange: Exchange, symbol: string) =>
      Effect.map(market.symbols({ exchange }), ({ symbols }) => symbols.find((s) => s.symbol === symbol))

    /** The rulebook's terms of paper trading in `symbol` on `exchange`. */
    const termsOf = (exchange: Exchange, symbol: string): Effect.Effect<TradingTerms, VenueFailure | FinalFailure> =>
      Effect.flatMap(rulesOf(exchange, symbol), (rules) =>
        rules === undefined
          ? Effect.fail(new FinalFailure({ message: `Unknown symbol on ${exchange}: ${symbol}` }))
          : Effect.succeed(paperTerms(rules)))

    /**
     * Charges a paper position the funding payments of its venue due since it was last charged,
     * each on the notional at the price then: the close of the hour before it (both venues pay on
     * the hour), the open a backtest pays at. Checked once an hour has turned since then, as no
     * payment can be due before; a payment whose price is not known yet waits for the next pass.
     */
    const chargeFunding = (position: PositionRow, until: Date) =>
      Effect.gen(function*() {
        const from = Date.parse(position.funded_until ?? position.opened_at)
        if (Math.floor(until.getTime() / hour) === Math.floor(from / hour)) return
        // A position held at a venue pays its funding there.
        if ((yield* ledger.routeOf(position)) !== "paper") return
        const source = { _tag: "Venue", exchange: position.exchange } as const
        const rates = (yield* market.fundingRates(source, {
          symbol: position.symbol,
          start: from + 1,
          end: until.getTime() + 1
        })).filter((r) => r.time > from && r.time <= until.getTime())
        if (rates.length === 0) return yield* ledger.chargeFunding(position, [], until)
        const hourBefore = (time: number) => Math.ceil(time / hour) * hour - hour
        const bars = yield* market.candles(source, {
          symbol: position.symbol,
          timeframe: "1h",
          start: hourBefore(rates[0]!.time),
          end: hourBefore(rates[rates.length - 1]!.time) + hour
        })
        const closes = new Map(bars.map((bar) => [bar.time, bar.close]))
        const known = rates.findIndex((r) => !closes.has(hourBefore(r.time)))
        const due = known === -1 ? rates : rates.slice(0, known)
        const payments = due.map((r) => ({ time: r.time, rate: r.rate, mark: closes.get(hourBefore(r.time))! }))
        yield* ledger.chargeFunding(position, payments, known === -1 ? until : new Date(rates[known]!.time - 1))
      }).pipe(withRequestSpan("OrderPlacement.chargeFunding"))

    /**
     * Fills a paper order by the rulebook: a run's at the venue's price with slippage and the taker
     * fee; an exit at its trigger price (a stop with slippage, a take profit with the maker fee, a
     * liquidation with the venue's liquidation fee). Funding due before the fill is charged first.
     */
    const fillOnPaper = (order: OrderRow, ticker: Ticker) =>
      Effect.gen(function*() {
        const terms = yield* termsOf(order.exchange, order.symbol)
        const at = yield* now
        const position = yield* ledger.position(order)
        if (Option.isSome(position)) yield* chargeFunding(position.value, at)
        const side = order.side === "buy" ? 1 : -1
        if (order.trigger === "run") {
          const price = takerPrice(ticker.price, side, terms.slippage)
          return yield* ledger.fill(order, {
            price,
            fee: (quantity) => feeOf(quantity * price, "market", terms),
            venue_order_id: null,
            at
          })
        }
        const trigger = order.trigger
        // The reconciliation books only what a venue did.
        if (trigger === "reconciliation") {
          return yield* new FinalFailure({ message: "A reconciliation is not filled on paper" })
        }
        const price = exitPrice(trigger, side === 1 ? -1 : 1, order.trigger_price ?? ticker.price, terms)
        return yield* ledger.fill(order, {
          price,
          fee: (quantity, held, backing) =>
            trigger === "liquidation" && held !== null
              ? liquidationFee(held, price, terms.rules.margin, backing)
              : feeOf(quantity * price, trigger, terms),
          venue_order_id: null,
          at
        })
      })

    /**
     * The quantity a venue order goes out with, rounded down to its symbol's lot, or why the
     * symbol's rules (`Venue.symbols`, cached per venue by market data) refuse it: a run's order is
     * checked against the minimums and the leverage cap at its notional at the venue's price; an
     * exit, closing what the venue filled, only needs a quantity of at least one lot.
     */
    const venueQuantity = (order: OrderRow) =>
      Effect.gen(function*() {
        const unknown = { refusal: `Unknown symbol on ${order.exchange}: ${order.symbol}` } as const
        const rules = yield* rulesOf(order.exchange, order.symbol)
        if (rules === undefined) return unknown
        const quantity = roundQuantity(rules, order.quantity)
        if (order.trigger !== "run") {
          const refusal = checkOrder({ ...rules, min_notional: 0 }, { quantity: order.quantity, price: 0, leverage: 1 })
          return refusal === null ? { quantity } : { refusal }
        }
        const ticker = (yield* venues[order.exchange].tickers).get(order.symbol)
        if (ticker === undefined) return unknown
        const price = order.order_type === "limit" && order.entry_price !== null
          ? roundPrice(rules, order.entry_price, order.side)
          : undefined
        const refusal = checkOrder(rules, {
          quantity: order.quantity,
          price: price ?? ticker.price,
          leverage: order.leverage
        })
        return refusal !== null ? { refusal } : price === undefined ? { quantity } : { quantity, price }
      })

    /**
     * Fills a limit or stop entry the mark has reached, by the rulebook: a limit at its level with
     * the maker fee, a stop at its level with slippage and the taker fee, sized then by the run's
     * decision against the account as it is (as a backtest sizes it when a bar reaches it).
     */
    const fillEntry = (order: OrderRow, type: "limit" | "stop") =>
      Effect.gen(function*() {
        const run = order.run_id === null ? Option.none() : yield* runs.findById(order.run_id)
        const decision = Option.isSome(run)
          ? decisionsOf(run.value)?.[run.value.symbols.indexOf(order.symbol)] ?? null
          : null
        if (decision === null) return yield* ledger.reject(order.id, "the run that placed it is gone")
        const terms = yield* termsOf(order.exchange, order.symbol)
        const at = yield* now
        const before = yield* ledger.position(order)
        if (Option.isSome(before)) yield* chargeFunding(before.value, at)
        const side = order.side === "buy" ? 1 : -1
        const price = entryPrice(type, side, order.entry_price!, terms)
        const sizing = sizeOrder(decision, Option.getOrNull(yield* ledger.position(order)), {
          freeCash: yield* ledger.freeCash(order.account_id),
          feeRate: terms.takerFeeRate,
          leverage: order.leverage,
          price,
          rules: terms.rules
        })
        if (sizing._tag !== "Order") return yield* ledger.reject(order.id, sizing.reason)
        const refused = yield* firewall.check({ ...order, side: sizing.side, quantity: sizing.quantity }, settleAny)
        if (refused !== null) return yield* ledger.reject(order.id, refusalText(refused))
        yield* ledger.fill({ ...order, side: sizing.side, quantity: sizing.quantity }, {
          price,
          fee: (quantity) => feeOf(quantity * price, type, terms),
          venue_order_id: null,
          at
        })
      }).pipe(withRequestSpan("OrderPlacement.fillEntry"))

    /** Sets the account's leverage and margin mode for the order's symbol on the venue, when they are not set so already. */
    const setLeverage = (order: OrderRow, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const at = { account_id: order.account_id, exchange: order.exchange, symbol: order.symbol }
        const wanted = { leverage: order.leverage, margin_mode: yield* ledger.marginMode(order.account_id) }
        const current = Option.getOrNull(yield* ledger.venueSetting(at))
        if (current?.leverage === wanted.leverage && current.margin_mode === wanted.margin_mode) return
        yield* venues[order.exchange].setLeverage(credentials, { symbol: order.symbol, ...wanted })
        yield* ledger.saveVenueSetting({ ...at, ...wanted })
      })

    /**
     * Books what the venue filled of the order (its quantity and average price, its fee or the
     * rulebook's taker fee when it names none), then brings the position's protection at the venue
     * in line with the position as it is now.
     */
    const fillAtVenue = (
      order: OrderRow,
      result: {
        readonly order_id: string
        readonly filled_quantity: number
        readonly average_price: number | null
        readonly fee?: number | null
      },
      credentials: VenueCredentials
    ) =>
      Effect.gen(function*() {
        const price = result.average_price!
        const fee = result.fee ??
          feeOf(
            result.filled_quantity * price,
            order.order_type === "limit" ? "limit" : "market",
            yield* termsOf(order.exchange, order.symbol)
          )
        const before = Option.getOrNull(yield* ledger.position(order))
        const filled = yield* ledger.fill(
          { ...order, quantity: result.filled_quantity },
          { price, fee: () => fee, venue_order_id: result.order_id, at: yield* now }
        )
        if (filled) yield* protect(order, before, credentials)
        return filled
      })

    /**
     * Rests the position's take profit and stop loss at the venue as its own conditional orders
     * (so they hold while the platform is down), cancelling those of the position as it was that
     * no longer apply. A trailing stop stays with the watcher (a venue trigger cannot trail), and so
     * does a level the venue would not take: the watcher covers what is not protected at the venue.
     */
    const protect = (
      at: { readonly account_id: AccountId; readonly symbol: string; readonly exchange: Exchange },
      before: PositionRow | null,
      credentials: VenueCredentials
    ) =>
      Effect.gen(function*() {
        const venue = venues[at.exchange]
        const after = Option.getOrNull(yield* ledger.position(at))
        const rules = yield* rulesOf(at.exchange, at.symbol)
        const wanted = after === null || after.trailing_stop !== null || rules === undefined
          ? []
          : ([["take_profit", after.take_profit_price], ["stop_loss", after.stop_loss_price]] as const).flatMap((
            [kind, level]
          ) =>
            level === null ? [] : [{ kind, price: roundPrice(rules, level, after.side === "long" ? "sell" : "buy") }]
          )
        const resting = (after ?? before)?.venue_protection ?? []
        const same = (a: { kind: string; price: number }, b: { kind: string; price: number }) =>
          a.kind === b.kind && a.price === b.price
        const kept = after === null || after.opened_at !== before?.opened_at
          ? []
          : resting.filter((r) => wanted.some((w) => same(r, w)))
        for (const stale of resting.filter((r) => !kept.includes(r))) {
          yield* venue.cancelOrder(credentials, { symbol: at.symbol, order_id: stale.order_id }).pipe(
            Effect.catchAll((e) => Effect.logWarning(`The venue did not cancel protection order ${stale.order_id}`, e))
          )
        }
        if (after === null) return
        const placed: Array<VenueProtection> = [...kept]
        for (const level of wanted.filter((w) => !kept.some((k) => same(k, w)))) {
          // Stamped with the time: one placed again after the venue dropped it needs a key the venue has not seen.
          const key = `${level.kind}:${at.account_id}:${at.symbol}:${Date.parse(after.opened_at)}:${level.price}:${
            (yield* Clock.currentTimeMillis).toString(36)
          }`
          const protection = yield* Effect.either(venue.placeProtection(credentials, {
            symbol: at.symbol,
            kind: level.kind,
            side: after.side === "long" ? "sell" : "buy",
            trigger_price: level.price,
            quantity: after.size,
            client_order_id: key
          }))
          if (protection._tag === "Right") placed.push({ ...level, key, order_id: protection.right })
          else {yield* Effect.logWarning(
              `The venue did not take the ${level.kind} of ${at.symbol}; the watcher keeps it`,
              protection.left
            )}
        }
        yield* ledger.setProtection(at, placed.length === 0 ? null : placed)
      }).pipe(withRequestSpan("OrderPlacement.protect"))

    /**
     * What the venue made of an order the ledger sent or rests there, found by its key: `filled`
     * (what executed is booked, as the answer would have been), `open` (it rests there), `unknown`
     * (the venue never received it), or why it is rejected or cancelled in the ledger (it executed
     * nothing; an order resting there that the platform does not rest is cancelled).
     */
    const resolveAtVenue = (order: OrderRow, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const venue = venues[order.exchange]
        const found = yield* venue.orderByKey(credentials, {
          symbol: order.symbol,
          client_order_id: order.idempotency_key!
        })
        if (found === undefined) return "unknown" as const
        if (found.status === "open" && order.order_type !== "market") {
          yield* ledger.markOpen(order.id, found.order_id)
          return "open" as const
        }
        if (found.status === "open") {
          yield* venue.cancelOrder(credentials, { symbol: order.symbol, order_id: found.order_id })
          if (found.filled_quantity === 0) {
            yield* ledger.reject(order.id, `the venue had it resting as order ${found.order_id}; it was cancelled`)
            return "rejected: the venue had it resting; it was cancelled" as const
          }
        }
        if (found.filled_quantity > 0 && found.average_price !== null) {
          yield* fillAtVenue(order, { ...found, fee: null }, credentials)
          return "filled" as const
        }
        const error = `the venue executed none of it (its order ${found.order_id} is ${found.status})`
        if (order.status === "open") yield* ledger.cancel(order.id, error)
        else yield* ledger.reject(order.id, error)
        return `rejected: ${error}` as const
      }).pipe(withRequestSpan("OrderPlacement.resolveAtVenue"))

    /**
     * An order at the venue (sent, its answer lost, or resting there) when the account has no
     * credentials for its venue any more: the venue may hold it and cannot be asked, so it is
     * neither closed in the ledger nor sent again. It stays as it is, flagged once
     * (`credentials_missing`), and the reconciliation looks it up once they return.
     */
    const unresolvable = (order: OrderRow) =>
      Effect.gen(function*() {
        const flag = { account_id: order.account_id, order_id: order.id, kind: "credentials_missing" } as const
        if (!(yield* reconciliations.recorded(flag))) {
          yield* reconciliations.insert(
            {
              ...flag,
              exchange: order.exchange,
              symbol: order.symbol,
              ledger_size: null,
              venue_size: null,
              message:
                `order ${order.id} was sent to ${order.exchange}, which cannot be asked about it: the account has ` +
                `no credentials for it any more; it stays ${order.status} and is looked up once they return`
            },
            order.user_id,
            yield* now
          )
        }
        return yield* new FinalFailure({
          message: `Order ${order.id} cannot be looked up: account ${order.account_id} has no ${order.exchange} ` +
            `credentials any more; it stays ${order.status} until they return`
        })
      })

    /**
     * Withdraws the entries a binding left resting for a symbol, as its next decision replaces
     * them: one resting at the venue is cancelled there first and looked up, so what it filled
     * before the cancel is booked; one the venue still holds, or that cannot be cancelled for want of
     * credentials, fails the run.
     */
    const withdrawEntries = (at: { readonly binding_id: BindingId; readonly symbol: string }) =>
      Effect.gen(function*() {
        for (const order of yield* ledger.openEntriesOf(at)) {
          if (order.route === "paper" || order.venue_order_id === null) continue
          const credentials = yield* venueAccounts.credentials(order.account_id, order.exchange)
          if (Option.isNone(credentials)) return yield* unresolvable(order)
          // Refused: it filled or was cancelled already, which the lookup tells.
          yield* Effect.catchTag(
            venues[order.exchange].cancelOrder(credentials.value, {
              symbol: order.symbol,
              order_id: order.venue_order_id
            }),
            "VenueRejected",
            () => Effect.void
          )
          if ((yield* resolveAtVenue(order, credentials.value)) === "open") {
            return yield* new UpstreamError({ error: `The venue still holds entry order ${order.id} after its cancel` })
          }
        }
        yield* ledger.cancelOpenEntries(at)
      }).pipe(withRequestSpan("OrderPlacement.withdrawEntries"))

    // What the firewall fills a flatten's exits with (declared apart, as `settle` calls the firewall).
    const settleAny: Settle = (order) => Effect.suspend(() => settle(order))

    /** Fills a recorded order once; answers the refusal (the venue's or a rule's), null when it filled or rests. */
    const settle = Effect.fn("OrderPlacement.settle")(function*(order: OrderRow) {
      if (order.status === "filled" || order.status === "open") return null
      if (order.status === "cancelled") return `Order ${order.id} cancelled: ${order.error}`
      if (order.status === "rejected") return `Order ${order.id} rejected: ${order.error}`
      // The risk firewall sees every order of a program, an AI trader or a person before it goes out; exits always pass.
      if (order.trigger === "run" && order.status === "pending") {
        const refused = yield* firewall.check(order, settleAny)
        if (refused !== null) {
          const error = refusalText(refused)
          yield* ledger.reject(order.id, error)
          return `Order ${order.id} rejected: ${error}`
        }
      }
      const venue = venues[order.exchange]
      if (order.route === "paper") {
        const ticker = (yield* venue.tickers).get(order.symbol)
        if (ticker === undefined) {
          return yield* new FinalFailure({ message: `Unknown symbol on ${order.exchange}: ${order.symbol}` })
        }
        return (yield* fillOnPaper(order, ticker)) ? null : yield* refusalOf(order)
      }
      const credentials = yield* venueAccounts.credentials(order.account_id, order.exchange)
      if (Option.isNone(credentials)) {
        if (order.status === "submitted") return yield* unresolvable(order)
        yield* ledger.reject(order.id, "the account has no credentials for its venue any more")
        return yield* new FinalFailure({ message: `Account ${order.account_id} has no ${order.exchange} credentials` })
      }
      // An order sent before (its answer lost, or its process stopped) is looked up before anything is sent.
      if (order.status === "submitted") {
        const found = yield* resolveAtVenue(order, credentials.value)
        if (found !== "unknown") return found === "filled" || found === "open" ? null : `Order ${order.id} ${found}`
        // The venue never received it: it goes out now, under the same key, so it is still one order.
        yield* ledger.markPending(order.id)
      }
      // Checked before the order is marked sent: a refusal here never reached the venue.
      const checked = yield* venueQuantity(order)
      if ("refusal" in checked) {
        yield* ledger.reject(order.id, checked.refusal)
        return `Order ${order.id} rejected: ${checked.refusal}`
      }
      const held = Option.getOrNull(yield* ledger.position(order))
      // An exit, or a run's order that only shrinks the position, may never open one the other way.
      const reduceOnly = order.trigger !== "run" ||
        (held !== null && held.side !== (order.side === "buy" ? "long" : "short") && checked.quantity <= held.size)
      if (!reduceOnly) {
        const set = yield* Effect.either(setLeverage(order, credentials.value))
        if (set._tag === "Left") {
          const e = set.left
          if (e._tag !== "VenueRejected" && e._tag !== "UnknownSymbol") return yield* e
          const error = e._tag === "UnknownSymbol" ? `Unknown symbol on ${order.exchange}: ${e.symbol}` : e.error
          yield* ledger.reject(order.id, error)
          return `Order ${order.id} rejected: ${error}`
        }
      }
      if (!(yield* ledger.markSubmitted(order.id))) return yield* refusalOf(order)
      // A limit entry the price has not reached rests at the venue at its level (on the symbol's tick).
      const limit = order.order_type === "limit" && order.entry_price !== null && "price" in checked
        ? { price: checked.price }
        : {}
      const placed = yield* Effect.either(venue.placeOrder(credentials.value, {
        symbol: order.symbol,
        side: order.side,
        quantity: checked.quantity,
        reduce_only: reduceOnly,
        ...limit,
        ...(order.idempotency_key === null ? {} : { client_order_id: order.idempotency_key })
      }))
      if (placed._tag === "Left") {
        const e = placed.left
        if (e._tag === "VenueRejected" || e._tag === "UnknownSymbol") {
          const error = e._tag === "UnknownSymbol" ? `Unknown symbol on ${order.exchange}: ${e.symbol}` : e.error
          yield* ledger.reject(order.id, error)
          return `Order ${order.id} rejected: ${error}`
        }
        // The answer is lost: the venue may have the order. It stays submitted, is looked up at
        // once and, failing that, by the reconciliation this failure asks for and the next attempt.
        yield* reconcileRequests.request(order.account_id)
        const found = yield* Effect.either(resolveAtVenue({ ...order, status: "submitted" }, credentials.value))
        if (found._tag === "Left" || found.right === "unknown") return yield* e
        return found.right === "filled" || found.right === "open" ? null : `Order ${order.id} ${found.right}`
      }
      const result = placed.right
      if (result.status === "open" && "price" in limit) {
        yield* ledger.markOpen(order.id, result.order_id)
        return null
      }
      if (result.status !== "filled" || result.average_price === null) {
        // A market order the venue left resting is not one the platform wants: it is cancelled there.
        yield* Effect.ignore(venue.cancelOrder(credentials.value, { symbol: order.symbol, order_id: result.order_id }))
        const error = `The venue left order ${result.order_id} open; it was cancelled`
        yield* ledger.reject(order.id, error)
        return `Order ${order.id} rejected: ${error}`
      }
      const filled = yield* fillAtVenue(order, result, credentials.value)
      return filled ? null : yield* refusalOf(order)
    })

    /** Why an order did not fill after all (an exit whose position a run closed first); null when another attempt filled it. */
    const refusalOf = (order: OrderRow) =>
      Effect.map(
        ledger.orderById(order.id),
        Option.match({
          onNone: () => null,
          onSome: (now) => now.status === "rejected" ? `Order ${order.id} rejected: ${now.error}` : null
        })
      )

    /**
     * One pass of the exit watcher: settles exits an earlier pass recorded but did not finish, then
     * closes every position whose mark (the venue's price, one fetch per venue) has reached its
     * take profit, stop loss or, on paper, liquidation price, charges paper positions their
     * funding, and fills the limit and stop entries the mark has reached. A position or an entry
     * that fails (its venue down) is logged and tried next pass. Answers whether it had anything
     * to watch (exits, positions or resting entries).
     */
    const watchExits = Effect.gen(function*() {
      const settleLogged = (order: OrderRow) =>
        settle(order).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`Exit order ${order.id} of account ${order.account_id} did not settle`, cause)
          )
        )
      const exits = yield* ledger.openExits()
      yield* Effect.forEach(exits, settleLogged, { discard: true })
      const marks = new Map<Exchange, ReadonlyMap<string, Ticker>>()
      const markOf = (exchange: Exchange, symbol: string): Effect.Effect<Ticker | undefined, VenueFailure> =>
        marks.has(exchange)
          ? Effect.succeed(marks.get(exchange)!.get(symbol))
          : Effect.map(venues[exchange].tickers, (all) => (marks.set(exchange, all), all.get(symbol)))
      const positions = yield* ledger.watched()
      for (const position of positions) {
        yield* Effect.gen(function*() {
          const mark = yield* markOf(position.exchange, position.symbol)
          if (mark === undefined) return
          const at = yield* now
          const terms = yield* termsOf(position.exchange, position.symbol)
          const order = yield* ledger.recordExit(position, mark.price, terms.rules.margin, at)
          if (Option.isSome(order)) return yield* settleLogged(order.value)
          yield* chargeFunding(position, at)
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(
              `The exits of ${position.symbol} on account ${position.account_id} were not checked`,
              cause
            )
          )
        )
      }
      const entries = yield* ledger.openEntries()
      for (const order of entries) {
        yield* Effect.gen(function*() {
          const mark = yield* markOf(order.exchange, order.symbol)
          const type = order.order_type
          if (mark === undefined || type === "market") return
          if (entryReached(type, order.side === "buy" ? 1 : -1, order.entry_price!, mark.price)) {
            yield* fillEntry(order, type)
          }
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`Entry order ${order.id} of account ${order.account_id} was not checked`, cause)
          )
        )
      }
      // Accounts with positions are valued: their equity peak, their loss and drawdown limits.
      yield* firewall.watch(settleAny)
      return exits.length + positions.length + entries.length > 0
    }).pipe(withRequestSpan("OrderPlacement.watchExits"))

    return { settle, watchExits, termsOf, chargeFunding, resolveAtVenue, protect, withdrawEntries } as const
  })
}) {}
