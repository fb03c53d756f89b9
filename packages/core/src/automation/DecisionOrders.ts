import { Clock, Effect, Option } from "effect"
import type { AccountRow } from "../accounts/Accounts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import type { ProgramId } from "../programs/Program.js"
import type { Decision } from "../sandbox/Decision.js"
import { entryReached, takerPrice } from "../trading/Fills.js"
import { type Held, sizeOrder } from "../trading/Ledger.js"
import type { UserId } from "../users/User.js"
import { type Exchange, Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import type { BindingId, RunId } from "./Automation.js"
import { maxLeverageOf, ordersGoToVenue } from "./Bindings.js"
import { LedgerRepo, type OrderRow } from "./LedgerRepo.js"
import { FinalFailure, OrderPlacement } from "./OrderPlacement.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * Who decided an order: a program's run (with its binding and program) or an AI trader's round
 * (all three null). `idempotency_key` makes the decision one order, however often it is placed.
 */
export interface DecisionOrigin {
  readonly run_id: RunId | null
  readonly binding_id: BindingId | null
  readonly program_id: ProgramId | null
  readonly user_id: UserId
  readonly idempotency_key: string
  /** The leverage when the decision names none: the binding's, else the account's default, else 1. */
  readonly leverage: number | null
}

/** What a placed decision left: its order (none when there was nothing to order) and its refusal, if any. */
export interface PlacedDecision {
  readonly order: OrderRow | null
  readonly refusal: string | null
}

/**
 * The one path from a decision to an order, for programs and AI traders alike: it is sized as the
 * backtest engine sizes it, within the account's leverage and cash and the venue's symbol rules,
 * recorded under the origin's key, and filled (`OrderPlacement.settle`, with the risk firewall) on
 * paper against the venue's price, or through the venue's API when the account has credentials
 * for a venue in http mode.
 */
export class DecisionOrders extends Effect.Service<DecisionOrders>()("@trading-platform/core/DecisionOrders", {
  effect: Effect.gen(function*() {
    const { venues: venueOptions } = yield* PlatformConfig
    const ledger = yield* LedgerRepo
    const venueAccounts = yield* VenueAccounts
    const placement = yield* OrderPlacement
    const venues = yield* Venues

    const place = Effect.fn("DecisionOrders.place")(function*(
      origin: DecisionOrigin,
      account: AccountRow,
      exchange: Exchange,
      symbol: string,
      decision: Decision
    ) {
      const held: Held | null = Option.getOrNull(yield* ledger.position({ account_id: account.id, symbol }))
      const leverage = decision.leverage ?? origin.leverage ?? account.default_leverage ?? 1
      const ticker = (yield* venues[exchange].tickers).get(symbol)
      if (ticker === undefined) {
        return yield* new FinalFailure({ message: `Unknown symbol on ${exchange}: ${symbol}` })
      }
      // Any decision but hold replaces the entries the binding left open (at the venue too), as in a backtest.
      if (decision.operation !== "hold" && origin.binding_id !== null) {
        yield* placement.withdrawEntries({ binding_id: origin.binding_id, symbol })
      }
      const credentials = yield* venueAccounts.credentials(account.id, exchange)
      const route = ordersGoToVenue(venueOptions[exchange].mode, credentials, account)
        ? "venue" as const
        : "paper" as const
      const type = decision.order_type ?? "market"
      const sign = decision.operation === "sell" ? -1 : 1
      // A limit or stop entry the price has not reached rests (an ioc one is dropped). On paper it
      // is sized when it fills; a limit sent to a venue rests there as the venue's own order, so it
      // is sized now, at its level.
      const resting = type !== "market" && !entryReached(type, sign, decision.entry_price!, ticker.price)
      if (resting && decision.time_in_force === "ioc") return { order: null, refusal: null }
      const atVenue = resting && route === "venue"
      // Sized at the price it is expected to fill at, as a backtest sizes it.
      const terms = yield* placement.termsOf(exchange, symbol)
      const sizing = resting && !atVenue
        ? {
          _tag: "Order" as const,
          side: decision.operation === "sell" ? "sell" as const : "buy" as const,
          quantity: 0
        }
        : sizeOrder(decision, held, {
          freeCash: yield* ledger.freeCash(account.id),
          feeRate: atVenue ? terms.makerFeeRate : terms.takerFeeRate,
          leverage,
          price: atVenue ? decision.entry_price! : takerPrice(ticker.price, sign, terms.slippage),
          rules: terms.rules
        })
      if (sizing._tag === "Nothing") return { order: null, refusal: null }
      const max = maxLeverageOf(account)
      const refusal = leverage > max
        ? `leverage_too_high: leverage ${leverage} is above the account's limit ${max}`
        : !Number.isInteger(leverage)
        ? `leverage must be a whole number, not ${leverage}`
        : atVenue && type === "stop"
        ? `stop entries rest on paper only; a venue's stop entries are not placed`
        : sizing._tag === "Refused"
        ? sizing.reason
        : null
      const order = yield* ledger.insertOrder({
        run_id: origin.run_id,
        binding_id: origin.binding_id,
        program_id: origin.program_id,
        user_id: origin.user_id,
        account_id: account.id,
        symbol,
        exchange,
        route,
        idempotency_key: origin.idempotency_key,
        side: sizing.side,
        quantity: sizing.quantity,
        leverage: Math.max(1, Math.round(leverage)),
        status: refusal !== null ? "rejected" : resting && !atVenue ? "open" : "pending",
        take_profit_price: decision.take_profit_price ?? null,
        stop_loss_price: decision.stop_loss_price ?? null,
        trailing_stop: decision.trailing_stop ?? null,
        order_type: type,
        entry_price: decision.entry_price ?? null,
        time_in_force: type === "market" ? null : decision.time_in_force ?? "gtc",
        error: refusal,
        created_at: yield* now
      })
      return { order, refusal: yield* placement.settle(order) }
    })

    /** Fills an order recorded before (by an attempt that stopped); answers its refusal, null when it filled or rests. */
    const resume = (order: OrderRow) => placement.settle(order)

    /** The order recorded under a key, as it is now. */
    const orderOfKey = (key: string) => ledger.orderOfKey(key)

    /** Adds a decision to the account's decision log (the trader export's `decision_logs`); once per account, time and symbol. */
    const logDecision = ledger.logDecision

    return { place, resume, orderOfKey, logDecision } as const
  })
}) {}
