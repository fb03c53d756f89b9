import { Clock, Duration, Effect, Layer, Option, Schema, Stream } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { leasedLoop } from "../jobs/Leases.js"
import { Notifications } from "../sql/Notifications.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import type { UserId } from "../users/User.js"
import { type Exchange, type Position, type VenueCredentials, Venues } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import { wallClock } from "../venues/VenueHttp.js"
import { ReconciliationEvent, type ReconciliationKind, ReconciliationList } from "./Automation.js"
import { LedgerRepo, type PositionRow, type VenueProtection } from "./LedgerRepo.js"
import { OrderPlacement } from "./OrderPlacement.js"
import { ReconcileRequests } from "./ReconcileRequests.js"
import { reconciliationChannel, ReconciliationNotice, ReconciliationRepo } from "./ReconciliationRepo.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A position's signed size: negative is short. */
const signed = (p: { readonly side: "long" | "short"; readonly size: number } | undefined) =>
  p === undefined ? 0 : p.side === "long" ? p.size : -p.size

// Sizes equal to a billionth are equal: the venue's decimals against the ledger's.
const same = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

// A balance this close to the ledger's (the larger of 1 USD and 1%) is the same balance: fees and funding round apart.
const balanceTolerance = (ledger: number) => Math.max(1, Math.abs(ledger) * 0.01)

/** A live account at its venue. */
export interface LiveAccount {
  readonly account_id: AccountId
  readonly user_id: UserId
  readonly exchange: Exchange
}

/**
 * Compares each live account's ledger with what its venue holds, and resolves every difference by
 * the rules of docs/automation.md, each logged as a reconciliation event:
 *
 * 1. orders sent whose answer was lost (`submitted`) or resting at the venue (`open`) are looked
 *    up by their client order id: what executed is booked, what the venue never received is
 *    rejected, what it closed without executing is rejected or cancelled;
 * 2. positions: one the ledger does not know is adopted (booked at the venue's entry price, no
 *    fee) and flagged; one the venue no longer holds is closed at the price of the protection order
 *    that closed it, else at the mark; one of another size is brought to the venue's size at the mark;
 * 3. the balance: a difference is reported, never booked (the venue's fees and funding have no
 *    ledger row to explain them).
 */
export class Reconciliation extends Effect.Service<Reconciliation>()("@trading-platform/core/Reconciliation", {
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo
    const repo = yield* ReconciliationRepo
    const venues = yield* Venues
    const venueAccounts = yield* VenueAccounts
    const placement = yield* OrderPlacement
    const accounts = yield* Accounts
    const notifications = yield* Notifications
    const { venues: venueOptions } = yield* PlatformConfig

    const record = (
      live: LiveAccount,
      kind: ReconciliationKind,
      detail: {
        readonly symbol?: string
        readonly order_id?: number
        readonly ledger_size?: number
        readonly venue_size?: number
        readonly message: string
      }
    ) =>
      Effect.gen(function*() {
        yield* repo.insert(
          {
            account_id: live.account_id,
            exchange: live.exchange,
            kind,
            symbol: detail.symbol ?? null,
            order_id: detail.order_id ?? null,
            ledger_size: detail.ledger_size ?? null,
            venue_size: detail.venue_size ?? null,
            message: detail.message
          },
          live.user_id,
          yield* now
        )
        yield* Effect.logInfo(`Reconciliation of account ${live.account_id} on ${live.exchange}: ${detail.message}`)
      })

    /** Orders whose fate the venue knows better than the ledger. */
    const orders = (live: LiveAccount, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        for (const status of ["submitted", "open"] as const) {
          for (const order of yield* ledger.venueOrders({ ...live, status })) {
            const outcome = yield* placement.resolveAtVenue(order, credentials)
            if (outcome === "open" && status === "open") continue
            const about = { symbol: order.symbol, order_id: order.id }
            if (outcome === "filled") {
              yield* record(live, "fill_booked", { ...about, message: `order ${order.id} filled at the venue; booked` })
            } else if (outcome === "open") {
              yield* record(live, "order_open", { ...about, message: `order ${order.id} rests at the venue` })
            } else if (outcome === "unknown") {
              // One just marked sent may still be on its way: it is left to its sender for two of the venue's timeouts.
              const age = (yield* Clock.currentTimeMillis) - Date.parse(order.created_at)
              if (age < 2 * Duration.toMillis(venueOptions[live.exchange].timeout)) continue
              // Reconciliation never sends an order again: the decision behind it may be stale.
              yield* ledger.reject(order.id, "the venue never received it; it was not sent again")
              yield* record(live, "order_unknown", {
                ...about,
                message: `order ${order.id} never reached the venue; rejected`
              })
            } else {
              yield* record(live, "order_closed", { ...about, message: `order ${order.id} ${outcome}` })
            }
          }
        }
      })

    /** The price a position the venue closed went at: its protection order's, when one of them filled. */
    const closingFill = (held: PositionRow, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        for (const protection of held.venue_protection ?? []) {
          const found = yield* venues[held.exchange].orderByKey(credentials, {
            symbol: held.symbol,
            client_order_id: protection.key
          })
          if (found !== undefined && found.filled_quantity > 0 && found.average_price !== null) {
            return { kind: protection.kind, price: found.average_price, order_id: found.order_id }
          }
        }
        return undefined
      })

    /** Books `quantity` of `side` on the ledger's position at `price` (no fee: the venue's is in its balance). */
    const book = (
      live: LiveAccount,
      booking: {
        readonly symbol: string
        readonly trigger: "reconciliation" | "take_profit" | "stop_loss"
        readonly side: "buy" | "sell"
        readonly quantity: number
        readonly leverage: number
        readonly price: number
        readonly key: string
        readonly venue_order_id: string | null
      }
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const order = yield* ledger.recordBooking({
          ...live,
          ...booking,
          trigger_price: booking.trigger === "reconciliation" ? null : booking.price,
          at
        })
        if (Option.isNone(order)) return undefined
        yield* ledger.fill(order.value, {
          price: booking.price,
          fee: () => 0,
          venue_order_id: booking.venue_order_id,
          at
        })
        return order.value.id
      })

    /**
     * Places again the protection of a position the venue no longer holds (a dead-man switch that
     * fired cancels every open order, the take profit and stop loss among them).
     */
    const recheckProtection = (live: LiveAccount, held: PositionRow, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const resting = held.venue_protection ?? []
        if (resting.length === 0) return
        const alive: Array<VenueProtection> = []
        for (const protection of resting) {
          const found = yield* venues[live.exchange].orderByKey(credentials, {
            symbol: held.symbol,
            client_order_id: protection.key
          })
          if (found?.status === "open") alive.push(protection)
        }
        if (alive.length === resting.length) return
        yield* ledger.setProtection(held, alive.length === 0 ? null : alive)
        yield* placement.protect(held, { ...held, venue_protection: alive }, credentials)
        yield* record(live, "protection_replaced", {
          symbol: held.symbol,
          message: `the venue no longer held ${
            resting.length - alive.length
          } of the ${held.symbol} position's protection orders; placed again`
        })
      })

    /** Brings the ledger's positions at the venue in line with the venue's. */
    const positions = (live: LiveAccount, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const venue = venues[live.exchange]
        const theirs = new Map((yield* venue.positions(credentials)).map((p): [string, Position] => [p.symbol, p]))
        const ours = new Map((yield* ledger.positionsAt(live)).map((p): [string, PositionRow] => [p.symbol, p]))
        const marks = yield* venue.tickers
        const stamp = (yield* Clock.currentTimeMillis).toString(36)
        for (const symbol of new Set([...theirs.keys(), ...ours.keys()])) {
          const held = ours.get(symbol)
          const there = theirs.get(symbol)
          const l = signed(held)
          const v = signed(there)
          if (same(l, v)) {
            if (held !== undefined) yield* recheckProtection(live, held, credentials)
            continue
          }
          const sizes = { symbol, ledger_size: l, venue_size: v }
          if (held === undefined) {
            const order_id = yield* book(live, {
              symbol,
              trigger: "reconciliation",
              side: v > 0 ? "buy" : "sell",
              quantity: Math.abs(v),
              leverage: Math.max(1, Math.round(there!.leverage)),
              price: there!.entry_price,
              key: `adopt:${live.account_id}:${symbol}:${stamp}`,
              venue_order_id: null
            })
            yield* ledger.markAdopted({ account_id: live.account_id, symbol })
            yield* record(live, "position_adopted", {
              ...sizes,
              ...(order_id === undefined ? {} : { order_id }),
              message: `the venue holds ${v} ${symbol} the ledger did not know; adopted at its entry price ${
                there!.entry_price
              } and flagged`
            })
            continue
          }
          const closedBy = v === 0 ? yield* closingFill(held, credentials) : undefined
          const mark = marks.get(symbol)?.price ?? held.entry_price
          const price = closedBy?.price ?? mark
          const delta = v - l
          const order_id = yield* book(live, {
            symbol,
            trigger: closedBy?.kind ?? "reconciliation",
            side: delta > 0 ? "buy" : "sell",
            quantity: Math.abs(delta),
            leverage: held.leverage,
            price,
            key: `${v === 0 ? "closed" : "resize"}:${live.account_id}:${symbol}:${Date.parse(held.opened_at)}:${stamp}`,
            venue_order_id: closedBy?.order_id ?? null
          })
          // What protected the position at the venue is of no use once it is gone (venue1 leaves the other trigger resting).
          if (v === 0) {
            for (const protection of held.venue_protection ?? []) {
              if (protection.order_id === closedBy?.order_id) continue
              yield* Effect.ignore(venue.cancelOrder(credentials, { symbol, order_id: protection.order_id }))
            }
          }
          yield* record(live, v === 0 ? "position_closed" : "position_resized", {
            ...sizes,
            ...(order_id === undefined ? {} : { order_id }),
            message: v === 0
              ? `the venue closed the ${symbol} position (${
                closedBy === undefined ? "not by its protection" : `by its ${closedBy.kind}`
              }); booked at ${price}`
              : `the venue holds ${v} ${symbol} where the ledger held ${l}; the difference is booked at the mark ${price}`
          })
        }
      })

    /** Reports a balance that differs from the ledger's cash and margins, once per difference. */
    const balance = (live: LiveAccount, credentials: VenueCredentials) =>
      Effect.gen(function*() {
        const venueTotal = (yield* venues[live.exchange].balances(credentials)).reduce((sum, b) => sum + b.total, 0)
        const ours = yield* ledger.cashOf(live.account_id)
        const differs = Math.abs(venueTotal - ours) > balanceTolerance(ours)
        const last = Option.getOrNull(yield* repo.lastBalance(live.account_id))
        if (differs && last?.kind === "balance_differs" && same(last.venue_size ?? NaN, venueTotal)) return
        if (!differs && last?.kind !== "balance_differs") return
        yield* record(live, differs ? "balance_differs" : "balance_matches", {
          ledger_size: ours,
          venue_size: venueTotal,
          message: differs
            ? `the venue's balance is ${venueTotal}, the ledger's cash and margins ${ours}; reported, not booked`
            : `the venue's balance ${venueTotal} matches the ledger's again`
        })
      })

    /** One live account reconciled: its orders first (a lost fill explains a position), then positions, then balance. */
    const account = Effect.fn("Reconciliation.account")(function*(live: LiveAccount) {
      const credentials = yield* venueAccounts.credentials(live.account_id, live.exchange)
      if (Option.isNone(credentials)) return
      yield* orders(live, credentials.value)
      yield* positions(live, credentials.value)
      yield* balance(live, credentials.value)
    })

    /** Every live account (or those in `only`), each on its own: a venue down for one does not stop the others. */
    const pass = (only?: ReadonlySet<AccountId>) =>
      Effect.gen(function*() {
        for (const live of yield* repo.liveAccounts()) {
          if (only !== undefined && !only.has(live.account_id)) continue
          yield* account(live).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logWarning(`Account ${live.account_id} was not reconciled with ${live.exchange}`, cause)
            )
          )
        }
      }).pipe(withRequestSpan("Reconciliation.pass"))

    /** The caller's account's reconciliation events, newest first. */
    const list = (caller: CurrentUserShape, accountId: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, accountId), repo.list({ account_id: accountId, ...pageOf(page) })).pipe(
        Effect.map((rows) => new ReconciliationList({ reconciliations: rows.map((r) => new ReconciliationEvent(r)) })),
        dieOnStorageFailure,
        withRequestSpan("Reconciliation.list", { attributes: { userId: caller.id, accountId } })
      )

    /** The symbols each account's dead-man switch is armed on, to disarm it once nothing rests. */
    const armed = new Map<AccountId, ReadonlyArray<string>>()

    /**
     * One beat of the dead-man switch: every live account with entries resting at its venue has the
     * venue's cancel-all-after armed `timeout` from now on those symbols (so, should this server
     * die, the venue cancels them then); an account armed before with nothing resting now is
     * disarmed. The venue's clock is the wall clock.
     */
    const deadMan = (timeout: Duration.Duration) =>
      Effect.gen(function*() {
        for (const live of yield* repo.liveAccounts()) {
          yield* Effect.gen(function*() {
            const resting = yield* ledger.venueOrders({ ...live, status: "open" })
            const symbols = [...new Set(resting.map((o) => o.symbol))]
            const before = armed.get(live.account_id)
            if (symbols.length === 0 && before === undefined) return
            const credentials = yield* venueAccounts.credentials(live.account_id, live.exchange)
            if (Option.isNone(credentials)) return
            const venue = venues[live.exchange]
            if (symbols.length === 0) {
              yield* venue.cancelAllAfter(credentials.value, { symbols: before!, deadline: null })
              armed.delete(live.account_id)
              return
            }
            const deadline = wallClock.unsafeCurrentTimeMillis() + Duration.toMillis(timeout)
            yield* venue.cancelAllAfter(credentials.value, { symbols, deadline })
            armed.set(live.account_id, symbols)
          }).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logWarning(`The dead-man switch of account ${live.account_id} was not armed`, cause)
            )
          )
        }
      }).pipe(withRequestSpan("Reconciliation.deadMan"))

    const decodeNotice = Schema.decodeUnknown(Schema.parseJson(ReconciliationNotice))
    /** Every instance's reconciliation events as they commit, with their account's owner. */
    const changes = notifications.listen(reconciliationChannel).pipe(
      Stream.mapEffect((payload) => Effect.option(decodeNotice(payload))),
      Stream.filterMap((notice) => notice)
    )

    return { account, pass, list, deadMan, changes } as const
  })
}) {}

/**
 * The reconciliation's schedule, on the replica holding the `reconciliation` lease: a pass at
 * start, then every `RECONCILE_INTERVAL_S`, and one for the accounts a venue error asked for as
 * soon as it is asked (`ReconcileRequests`); and the dead-man switch's beat, a third of
 * `DEADMAN_TIMEOUT_S`, on the replica holding `dead_man_switch`. Only where venues are in http mode.
 */
export const ReconciliationLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation, venues } = yield* PlatformConfig
    if (venues.venue1.mode !== "http" && venues.venue2.mode !== "http") return
    const reconciliation = yield* Reconciliation
    const requests = yield* ReconcileRequests
    const interval = automation.reconcileInterval ?? Duration.minutes(1)
    let asked: ReadonlySet<AccountId> | undefined
    // Sleeps until the interval is up or an account is asked for; the pass then covers those asked, or all.
    const rest = Effect.raceFirst(
      Effect.as(Effect.sleep(interval), undefined),
      requests.take
    ).pipe(Effect.map((only) => void (asked = only)))
    yield* leasedLoop(
      "reconciliation",
      { interval, lease: automation.lease, rest },
      Effect.suspend(() => reconciliation.pass(asked))
    )
    // Armed for three beats, so two missed beats (a slow venue, a busy database) do not trip it.
    const timeout = automation.deadManTimeout ?? Duration.minutes(1)
    yield* leasedLoop(
      "dead_man_switch",
      { interval: Duration.millis(Duration.toMillis(timeout) / 3), lease: automation.lease },
      reconciliation.deadMan(timeout)
    )
  })
)
