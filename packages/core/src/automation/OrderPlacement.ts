import { Clock, Data, Effect, Option } from "effect"
import { MarketData } from "../market/MarketData.js"
import { refusalText, RiskFirewall, type Settle } from "../risk/RiskFirewall.js"
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
import { checkOrder, roundQuantity } from "../venues/SymbolRules.js"
import { type Exchange, type Ticker, type VenueFailure, Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import { LedgerRepo, type OrderRow, type PositionRow } from "./LedgerRepo.js"
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
      }).pipe(Effect.withSpan("OrderPlacement.chargeFunding"))

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
        const refusal = checkOrder(rules, { quantity: order.quantity, price: ticker.price, leverage: order.leverage })
        return refusal === null ? { quantity } : { refusal }
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
      }).pipe(Effect.withSpan("OrderPlacement.fillEntry"))

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
      const unconfirmed = (why: string) =>
        Effect.zipRight(
          ledger.reject(order.id, `${why}; it was not sent again, so check the venue`),
          Effect.fail(new FinalFailure({ message: `The venue did not confirm order ${order.id}: ${why}` }))
        )
      // Checked before the order is marked sent: a refusal here never reached the venue.
      const checked = yield* venueQuantity(order)
      if ("refusal" in checked) {
        yield* ledger.reject(order.id, checked.refusal)
        return `Order ${order.id} rejected: ${checked.refusal}`
      }
      if (!(yield* ledger.markSubmitted(order.id))) {
        return yield* unconfirmed("the order was sent before the run was interrupted")
      }
      const credentials = yield* venueAccounts.credentials(order.account_id, order.exchange)
      if (Option.isNone(credentials)) {
        yield* ledger.reject(order.id, "the account has no credentials for its venue any more")
        return yield* new FinalFailure({ message: `Account ${order.account_id} has no ${order.exchange} credentials` })
      }
      const placed = yield* Effect.either(venue.placeOrder(credentials.value, {
        symbol: order.symbol,
        side: order.side,
        quantity: checked.quantity,
        ...(order.idempotency_key === null ? {} : { client_order_id: order.idempotency_key })
      }))
      if (placed._tag === "Left") {
        const e = placed.left
        if (e._tag === "VenueRejected" || e._tag === "UnknownSymbol") {
          const error = e._tag === "UnknownSymbol" ? `Unknown symbol on ${order.exchange}: ${e.symbol}` : e.error
          yield* ledger.reject(order.id, error)
          return `Order ${order.id} rejected: ${error}`
        }
        return yield* unconfirmed(e.error)
      }
      const result = placed.right
      if (result.status !== "filled" || result.average_price === null) {
        const error = `The venue left order ${result.order_id} open`
        yield* ledger.reject(order.id, error)
        return `Order ${order.id} rejected: ${error}`
      }
      const price = result.average_price
      const fee = result.fee ??
        feeOf(result.filled_quantity * price, "market", yield* termsOf(order.exchange, order.symbol))
      const filled = yield* ledger.fill(
        { ...order, quantity: result.filled_quantity },
        {
          price,
          fee: () => fee,
          venue_order_id: result.order_id,
          at: yield* now
        }
      )
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
     * that fails (its venue down) is logged and tried next pass.
     */
    const watchExits = Effect.gen(function*() {
      const settleLogged = (order: OrderRow) =>
        settle(order).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`Exit order ${order.id} of account ${order.account_id} did not settle`, cause)
          )
        )
      yield* Effect.forEach(yield* ledger.openExits(), settleLogged, { discard: true })
      const marks = new Map<Exchange, ReadonlyMap<string, Ticker>>()
      const markOf = (exchange: Exchange, symbol: string): Effect.Effect<Ticker | undefined, VenueFailure> =>
        marks.has(exchange)
          ? Effect.succeed(marks.get(exchange)!.get(symbol))
          : Effect.map(venues[exchange].tickers, (all) => (marks.set(exchange, all), all.get(symbol)))
      for (const position of yield* ledger.watched()) {
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
      for (const order of yield* ledger.openEntries()) {
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
    }).pipe(Effect.withSpan("OrderPlacement.watchExits"))

    return { settle, watchExits, termsOf, chargeFunding } as const
  })
}) {}
