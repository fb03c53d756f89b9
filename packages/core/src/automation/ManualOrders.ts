import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { AccountId } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import {
  Conflict,
  LeverageTooHigh,
  OrderRejected,
  RiskBlocked,
  SymbolNotListed,
  UpstreamError
} from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { MarketData } from "../market/MarketData.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import { takerPrice } from "../trading/Fills.js"
import { dir } from "../trading/Ledger.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { checkOrder, roundQuantity } from "../venues/SymbolRules.js"
import { Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import type { ManualOrderRequest } from "./Automation.js"
import { accountExchange, maxLeverageOf, ordersGoToVenue, toOrder } from "./Bindings.js"
import { LedgerRepo, type OrderRow } from "./LedgerRepo.js"
import { OrderPlacement } from "./OrderPlacement.js"
import { refusalOf } from "./RiskFirewall.js"

/**
 * Orders placed by hand (`POST /api/account/{id}/orders`): recorded in the ledger as a run's order
 * is (no run, binding or program; its key from the client's `Idempotency-Key` or
 * `client_order_id`), checked against the rulebook (lot, minimums, leverage caps, free cash), then
 * filled by `OrderPlacement.settle`, so paper or venue, the risk firewall and the fills are a
 * program's. A refusal is recorded as a rejected order and answered 422.
 */
export class ManualOrders extends Effect.Service<ManualOrders>()("@trading-platform/core/ManualOrders", {
  effect: Effect.gen(function*() {
    const { venues: venueOptions } = yield* PlatformConfig
    const accounts = yield* Accounts
    const ledger = yield* LedgerRepo
    const placement = yield* OrderPlacement
    const market = yield* MarketData
    const venues = yield* Venues
    const venueAccounts = yield* VenueAccounts

    /** The recorded order as the answer: the order, or the 422 of its refusal. */
    const answer = (order: OrderRow) => {
      if (order.status !== "rejected") return Effect.succeed(toOrder(order))
      const refusal = refusalOf(order.error)
      return refusal === undefined
        ? Effect.fail(new OrderRejected({ error: order.error ?? "The order was rejected", order_id: order.id }))
        : Effect.fail(new RiskBlocked({ error: refusal.message, rule: refusal.rule, order_id: order.id }))
    }

    /** The reason the rulebook refuses the order, or the quantity it goes out with. */
    const size = (
      request: ManualOrderRequest,
      held: {
        readonly side: "long" | "short"
        readonly size: number
        readonly margin: number
        readonly entry_price: number
      } | null,
      market: {
        readonly price: number
        readonly leverage: number
        readonly freeCash: number
        readonly feeRate: number
        readonly rules: Parameters<typeof checkOrder>[0]
      }
    ): { readonly quantity: number; readonly refusal: string | null } => {
      const closing = held !== null && held.side !== (request.side === "buy" ? "long" : "short") ? held : null
      if (request.reduce_only === true) {
        return closing === null
          ? { quantity: request.quantity, refusal: "reduce_only: there is no opposite position to reduce" }
          : { quantity: Math.min(request.quantity, closing.size), refusal: null }
      }
      const closed = closing === null ? 0 : Math.min(request.quantity, closing.size)
      const opening = roundQuantity(market.rules, request.quantity - closed)
      if (request.quantity - closed <= 0) return { quantity: closed, refusal: null }
      const refusal = checkOrder(market.rules, { quantity: opening, price: market.price, leverage: market.leverage })
      if (refusal !== null) return { quantity: request.quantity, refusal }
      const freed = closing === null
        ? 0
        : closing.margin + closing.size * (market.price - closing.entry_price) * dir(closing.side) -
          closing.size * market.price * market.feeRate
      const quantity = closed + opening
      const needed = (opening * market.price) / market.leverage + quantity * market.price * market.feeRate
      const free = market.freeCash + freed
      return needed > free + 1e-9
        ? {
          quantity,
          refusal: `insufficient free cash: the order needs ${needed.toFixed(2)} of margin and fees, the account has ${
            free.toFixed(2)
          }`
        }
        : { quantity, refusal: null }
    }

    const place = (
      caller: CurrentUserShape,
      accountId: AccountId,
      request: ManualOrderRequest,
      headerKey: string | undefined
    ) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, accountId)
        if (headerKey !== undefined && request.client_order_id != null && headerKey !== request.client_order_id) {
          return yield* invalidField("client_order_id", "must equal the Idempotency-Key header when both are given")
        }
        const key = headerKey ?? request.client_order_id ?? undefined
        const idempotencyKey = `manual:${account.id}:${key ?? randomUUID()}`
        if (key !== undefined) {
          const earlier = yield* ledger.orderOfKey(idempotencyKey)
          if (Option.isSome(earlier)) return yield* answer(earlier.value)
        }
        if (!account.is_active) return yield* new Conflict({ error: `Account ${account.id} is not active` })
        const exchange = accountExchange(account)
        yield* market.listed(exchange, [request.symbol])
        const leverage = request.leverage ?? account.default_leverage ?? 1
        const max = maxLeverageOf(account)
        if (leverage < 1 || leverage > max) {
          return yield* new LeverageTooHigh({ error: `Leverage ${leverage} is outside 1..${max}, the account's limit` })
        }
        const ticker = (yield* venues[exchange].tickers).get(request.symbol)
        if (ticker === undefined) {
          return yield* new SymbolNotListed({
            error: `${request.symbol} is not listed on ${exchange}`,
            symbols: [request.symbol]
          })
        }
        const terms = yield* placement.termsOf(exchange, request.symbol)
        const held = Option.getOrNull(yield* ledger.position({ account_id: account.id, symbol: request.symbol }))
        const sized = size(request, held, {
          price: takerPrice(ticker.price, request.side === "buy" ? 1 : -1, terms.slippage),
          leverage,
          freeCash: yield* ledger.freeCash(account.id),
          feeRate: terms.takerFeeRate,
          rules: terms.rules
        })
        const credentials = yield* venueAccounts.credentials(account.id, exchange)
        const route = ordersGoToVenue(venueOptions[exchange].mode, credentials, account)
          ? "venue" as const
          : "paper" as const
        const order = yield* ledger.insertOrder({
          run_id: null,
          binding_id: null,
          program_id: null,
          user_id: caller.id,
          account_id: account.id,
          symbol: request.symbol,
          exchange,
          route,
          idempotency_key: idempotencyKey,
          side: request.side,
          quantity: sized.quantity,
          leverage,
          status: sized.refusal === null ? "pending" : "rejected",
          take_profit_price: null,
          stop_loss_price: null,
          trailing_stop: null,
          order_type: "market",
          entry_price: null,
          time_in_force: null,
          error: sized.refusal,
          created_at: yield* now
        })
        // A run's failure for good (the venue did not confirm it) is an answer the client can act on.
        const failure = yield* placement.settle(order).pipe(
          Effect.as(null),
          Effect.catchTag("FinalFailure", (e) => Effect.succeed(e.message))
        )
        const after = Option.getOrElse(yield* ledger.orderById(order.id), () => order)
        if (failure !== null && after.status !== "rejected") return yield* new UpstreamError({ error: failure })
        return yield* answer(after)
      }).pipe(
        Effect.catchTags({
          UnknownSymbol: (e) => new SymbolNotListed({ error: `${e.symbol} is not listed`, symbols: [e.symbol] }),
          FinalFailure: (e) => new UpstreamError({ error: e.message })
        }),
        dieOnStorageFailure,
        withRequestSpan("ManualOrders.place", { attributes: { userId: caller.id, accountId } })
      )

    return { place } as const
  })
}) {}
