import { Clock, Data, Effect, Option } from "effect"
import { paperFeeRate, paperSlippage } from "../venues/SimulatedVenue.js"
import { type Exchange, type Ticker, type VenueFailure, Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import { LedgerRepo, type OrderRow } from "./LedgerRepo.js"

/** A run or an order ends for a reason that trying again would not change (the program, a rule, a venue that may have it). */
export class FinalFailure extends Data.TaggedError("FinalFailure")<{ readonly message: string }> {}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

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

    /** Fills a recorded order once; answers the refusal (the venue's or a rule's), null when it filled. */
    const settle = Effect.fn("OrderPlacement.settle")(function*(order: OrderRow) {
      if (order.status === "filled") return null
      if (order.status === "rejected") return `Order ${order.id} rejected: ${order.error}`
      const venue = venues[order.exchange]
      if (order.route === "paper") {
        const ticker = (yield* venue.tickers).get(order.symbol)
        if (ticker === undefined) {
          return yield* new FinalFailure({ message: `Unknown symbol on ${order.exchange}: ${order.symbol}` })
        }
        const price = ticker.price * (1 + (order.side === "buy" ? paperSlippage : -paperSlippage))
        const filled = yield* ledger.fill(order, {
          price,
          fee: order.quantity * price * paperFeeRate,
          venue_order_id: null,
          at: yield* now
        })
        return filled ? null : yield* refusalOf(order)
      }
      const unconfirmed = (why: string) =>
        Effect.zipRight(
          ledger.reject(order.id, `${why}; it was not sent again, so check the venue`),
          Effect.fail(new FinalFailure({ message: `The venue did not confirm order ${order.id}: ${why}` }))
        )
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
        quantity: order.quantity,
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
      const filled = yield* ledger.fill(
        { ...order, quantity: result.filled_quantity },
        {
          price,
          fee: result.fee ?? result.filled_quantity * price * paperFeeRate,
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
     * take profit or stop loss. A position that fails (its venue down) is logged and tried next pass.
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
          const order = yield* ledger.recordExit(position, mark.price, yield* now)
          if (Option.isSome(order)) yield* settleLogged(order.value)
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(
              `The exits of ${position.symbol} on account ${position.account_id} were not checked`,
              cause
            )
          )
        )
      }
    }).pipe(Effect.withSpan("OrderPlacement.watchExits"))

    return { settle, watchExits } as const
  })
}) {}
