import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { ProgramId } from "../programs/Program.js"
import { IsoTimestamp } from "../sql/Columns.js"
import type { ExitTrigger } from "../trading/Fills.js"
import {
  applyFill,
  bestOf,
  exitTriggered,
  fundingPayment,
  type Held,
  liquidationPrice,
  stopOf
} from "../trading/Ledger.js"
import { fromMoney, moneyText, toMoney } from "../trading/Money.js"
import { UserId } from "../users/User.js"
import type { MarginTable } from "../venues/MarginTiers.js"
import { Exchange } from "../venues/Venue.js"
import { BindingId, OrderRoute, OrderStatus, OrderTrigger, RunId } from "./Automation.js"

const Numeric = Schema.NumberFromString

/** A take profit or stop loss resting at the venue for a position: its client key, the venue's id and its trigger. */
export const VenueProtection = Schema.Struct({
  kind: Schema.Literal("take_profit", "stop_loss"),
  key: Schema.String,
  order_id: Schema.String,
  price: Schema.Number
})
export type VenueProtection = typeof VenueProtection.Type

export const OrderRow = Schema.Struct({
  id: Schema.Int,
  run_id: Schema.NullOr(RunId),
  binding_id: Schema.NullOr(BindingId),
  program_id: Schema.NullOr(ProgramId),
  user_id: UserId,
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  route: OrderRoute,
  trigger: OrderTrigger,
  /** Sent to the venue as the client order id: a run's order, or a position's close, is one order. */
  idempotency_key: Schema.NullOr(Schema.String),
  side: Schema.Literal("buy", "sell"),
  quantity: Numeric,
  leverage: Schema.Int,
  status: OrderStatus,
  take_profit_price: Schema.NullOr(Numeric),
  stop_loss_price: Schema.NullOr(Numeric),
  trailing_stop: Schema.NullOr(Schema.Number),
  order_type: Schema.Literal("market", "limit", "stop"),
  entry_price: Schema.NullOr(Numeric),
  time_in_force: Schema.NullOr(Schema.Literal("gtc", "ioc")),
  trigger_price: Schema.NullOr(Numeric),
  venue_order_id: Schema.NullOr(Schema.String),
  price: Schema.NullOr(Numeric),
  fee: Schema.NullOr(Numeric),
  realized_pnl: Schema.NullOr(Numeric),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  filled_at: Schema.NullOr(IsoTimestamp)
})
export type OrderRow = typeof OrderRow.Type

export const PositionRow = Schema.Struct({
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  side: Schema.Literal("long", "short"),
  size: Numeric,
  entry_price: Numeric,
  leverage: Schema.Int,
  margin: Numeric,
  take_profit_price: Schema.NullOr(Numeric),
  stop_loss_price: Schema.NullOr(Numeric),
  trailing_stop: Schema.NullOr(Schema.Number),
  /** The best mark a trailing stop has seen: the highest for a long, the lowest for a short. */
  trail_best: Schema.NullOr(Numeric),
  opened_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  /** Funding is charged for the payments after this time (the opening, at first). */
  funded_until: Schema.NullOr(IsoTimestamp),
  /** The take profit and stop loss resting at the venue as its own orders; null when none rest there. */
  venue_protection: Schema.NullOr(Schema.parseJson(Schema.Array(VenueProtection))),
  /** The ledger took the position over from the venue, which held it without the ledger knowing. */
  adopted: Schema.Boolean
})
export type PositionRow = typeof PositionRow.Type

const NewOrder = Schema.Struct({
  /** Null, with the binding and the program, for an order placed by hand. */
  run_id: Schema.NullOr(RunId),
  binding_id: Schema.NullOr(BindingId),
  program_id: Schema.NullOr(ProgramId),
  user_id: UserId,
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  route: OrderRoute,
  idempotency_key: Schema.String,
  side: Schema.Literal("buy", "sell"),
  quantity: Schema.Number,
  leverage: Schema.Int,
  status: OrderStatus,
  take_profit_price: Schema.NullOr(Schema.Number),
  stop_loss_price: Schema.NullOr(Schema.Number),
  trailing_stop: Schema.NullOr(Schema.Number),
  order_type: Schema.Literal("market", "limit", "stop"),
  entry_price: Schema.NullOr(Schema.Number),
  time_in_force: Schema.NullOr(Schema.Literal("gtc", "ioc")),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type NewOrder = typeof NewOrder.Type

/**
 * A fill as the venue (or the paper ledger) reports it; its fee, of the quantity filled against the
 * position as it is then and what backs that position (see `lockAccount`).
 */
export interface Fill {
  readonly price: number
  readonly fee: (quantity: number, held: Held | null, backing: number) => number
  readonly venue_order_id: string | null
  readonly at: Date
}

/** An order that closes its position as it is when it fills (an exit), rather than moving it by its quantity. */
const isExit = (order: OrderRow) => order.trigger !== "run" && order.trigger !== "reconciliation"

/** SQL for orders, positions and the cash they move; a fill is one transaction. */
export class LedgerRepo extends Effect.Service<LedgerRepo>()("@trading-platform/core/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A run's order for one of its symbols. */
    const orderOfRun = SqlSchema.findOne({
      Request: Schema.Struct({ run_id: RunId, symbol: Schema.String }),
      Result: OrderRow,
      execute: (q) => sql`SELECT * FROM automation_orders WHERE run_id = ${q.run_id} AND symbol = ${q.symbol}`
    })

    const orderById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: OrderRow,
      execute: (id) => sql`SELECT * FROM automation_orders WHERE id = ${id}`
    })

    const orderOfKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: OrderRow,
      execute: (key) => sql`SELECT * FROM automation_orders WHERE idempotency_key = ${key}`
    })

    /**
     * Records a run's order for a symbol, or an order placed by hand (no run) under its key; the
     * run's earlier attempt, or the request sent again, may have recorded it already, and that one wins.
     */
    const insertOrder = (order: NewOrder) =>
      Effect.flatMap(
        Schema.encode(NewOrder)(order),
        (row) =>
          order.run_id === null
            ? sql`INSERT INTO automation_orders ${sql.insert(row)} ON CONFLICT (idempotency_key) DO NOTHING`
            : sql`INSERT INTO automation_orders ${sql.insert(row)} ON CONFLICT (run_id, symbol) DO NOTHING`
      ).pipe(
        Effect.zipRight(
          order.run_id === null
            ? orderOfKey(order.idempotency_key)
            : orderOfRun({ run_id: order.run_id, symbol: order.symbol })
        ),
        Effect.flatMap(Option.match({ onNone: () => Effect.die(new Error("order vanished")), onSome: Effect.succeed }))
      )

    /** Marks a pending order as sent to the venue; false when it was not pending (sent before a crash). */
    const markSubmitted = (id: number) =>
      Effect.map(
        sql`UPDATE automation_orders SET status = 'submitted' WHERE id = ${id} AND status = 'pending' RETURNING id`,
        (rows) => rows.length > 0
      )

    const reject = (id: number, error: string) =>
      sql`
        UPDATE automation_orders SET status = 'rejected', error = ${error}
        WHERE id = ${id} AND status IN ('pending', 'submitted', 'open')`
        .pipe(Effect.asVoid)

    const position = SqlSchema.findOne({
      Request: Schema.Struct({ account_id: AccountId, symbol: Schema.String }),
      Result: PositionRow,
      execute: (q) => sql`SELECT * FROM account_positions WHERE account_id = ${q.account_id} AND symbol = ${q.symbol}`
    })

    const positions = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: PositionRow,
      execute: (q) =>
        sql`
        SELECT * FROM account_positions WHERE account_id = ${q.account_id}
        ORDER BY symbol LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    const orders = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: OrderRow,
      execute: (q) =>
        sql`
        SELECT * FROM automation_orders WHERE account_id = ${q.account_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /**
     * Fills an order once: the order, the account's `current_cash` and `frozen_cash`, its position
     * and the trade (for the trader export) change in one transaction, and only while the order is
     * still open, so a repeated fill of the same order changes nothing. Answers whether it filled.
     * A take profit or stop loss closes the position as it is at the fill (at the venue, at most
     * what the venue filled); one that finds it closed already (by a run) is rejected instead of
     * opening the other way.
     */
    /**
     * Locks the account's row, which orders its fills, and answers what backs a position of it
     * against its losses: the position's margin, and with cross margin the free cash too.
     */
    const lockAccount = (id: AccountId) =>
      Effect.map(
        sql<{ margin_mode: string; current_cash: string }>`
          SELECT margin_mode, current_cash FROM accounts WHERE id = ${id} FOR UPDATE`,
        ([account]) => (held: Held) =>
          held.margin + (account?.margin_mode === "cross" ? Math.max(Number(account.current_cash), 0) : 0)
      )

    const fill = (order: OrderRow, f: Fill) =>
      sql.withTransaction(Effect.gen(function*() {
        const backingOf = yield* lockAccount(order.account_id)
        const current = Option.getOrNull(yield* position({ account_id: order.account_id, symbol: order.symbol }))
        let quantity = order.quantity
        if (isExit(order)) {
          if (current === null || current.side === (order.side === "buy" ? "long" : "short")) {
            yield* reject(order.id, "the position was closed before its exit filled")
            return false
          }
          quantity = order.route === "paper" ? current.size : Math.min(order.quantity, current.size)
        }
        const fee = f.fee(quantity, current, current === null ? 0 : backingOf(current))
        const effect = applyFill(current, { ...order, price: f.price, fee, quantity })
        const filled = yield* sql`
          UPDATE automation_orders SET status = 'filled', quantity = ${quantity}, price = ${f.price}, fee = ${fee},
            realized_pnl = ${effect.realized}, closed_quantity = ${effect.closed},
            venue_order_id = ${f.venue_order_id}, filled_at = ${f.at}, error = NULL
          WHERE id = ${order.id} AND status IN ('pending', 'submitted', 'open') RETURNING id`
        if (filled.length === 0) return false
        yield* sql`
          UPDATE accounts SET current_cash = current_cash + ${moneyText(effect.cash)}::numeric,
            frozen_cash = frozen_cash + ${moneyText(effect.frozen)}::numeric,
            updated_at = ${f.at}
          WHERE id = ${order.account_id}`
        const p = effect.position
        // A new position (or a reversed one) takes the order's exits; an addition the ones it gives; a reduction keeps them.
        const opened = current === null || current.side !== p?.side
        const added = !opened && effect.closed === 0
        const exit = (mine: number | null, kept: number | null | undefined) =>
          opened ? mine : added ? (mine ?? kept ?? null) : (kept ?? null)
        const takeProfit = exit(order.take_profit_price, current?.take_profit_price)
        const stopLoss = exit(order.stop_loss_price, current?.stop_loss_price)
        const trailingStop = exit(order.trailing_stop, current?.trailing_stop)
        const trailBest = opened ? f.price : current?.trail_best ?? f.price
        if (p === null) {
          yield* sql`DELETE FROM account_positions WHERE account_id = ${order.account_id} AND symbol = ${order.symbol}`
        } else {
          yield* sql`
            INSERT INTO account_positions (account_id, symbol, exchange, side, size, entry_price, leverage, margin,
              take_profit_price, stop_loss_price, trailing_stop, trail_best, opened_at, updated_at, funded_until)
            VALUES (${order.account_id}, ${order.symbol}, ${order.exchange}, ${p.side}, ${p.size}, ${p.entry_price}, ${p.leverage},
              ${p.margin}, ${takeProfit}, ${stopLoss}, ${trailingStop}, ${trailBest}, ${f.at}, ${f.at}, ${f.at})
            ON CONFLICT (account_id, symbol) DO UPDATE SET side = EXCLUDED.side, size = EXCLUDED.size,
              entry_price = EXCLUDED.entry_price, leverage = EXCLUDED.leverage, margin = EXCLUDED.margin,
              take_profit_price = EXCLUDED.take_profit_price, stop_loss_price = EXCLUDED.stop_loss_price,
              trailing_stop = EXCLUDED.trailing_stop, trail_best = EXCLUDED.trail_best,
              opened_at = CASE WHEN account_positions.side = EXCLUDED.side THEN account_positions.opened_at ELSE EXCLUDED.opened_at END,
              funded_until = CASE WHEN account_positions.side = EXCLUDED.side THEN account_positions.funded_until
                ELSE EXCLUDED.funded_until END,
              updated_at = EXCLUDED.updated_at`
        }
        // Keyed by its order, so fills of one account, symbol and side in the same millisecond are separate trades.
        yield* sql`
          INSERT INTO account_trades (account_id, order_id, trade_time, symbol, side, quantity, price, fee, realized_pnl)
          VALUES (${order.account_id}, ${order.id}, ${f.at}, ${order.symbol}, ${order.side}, ${quantity}, ${f.price}, ${fee},
            ${effect.closed > 0 ? effect.realized : null})`
        return true
      }))

    /**
     * Charges a position the funding `payments` (oldest first) due after its `funded_until` and up
     * to `until`, under the account's lock: each payment is a row of `account_funding` and moves
     * `current_cash`, once, whichever replica or pass charged it. Answers the amount charged.
     */
    const chargeFunding = (
      at: { readonly account_id: AccountId; readonly symbol: string },
      payments: ReadonlyArray<{ readonly time: number; readonly rate: number; readonly mark: number }>,
      until: Date
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* lockAccount(at.account_id)
        const current = yield* position(at)
        if (Option.isNone(current)) return 0
        const held = current.value
        const from = Date.parse(held.funded_until ?? held.opened_at)
        let total = 0n
        for (const payment of payments) {
          if (payment.time <= from || payment.time > until.getTime()) continue
          const amount = fundingPayment(held, payment.rate, payment.mark)
          const inserted = yield* sql`
            INSERT INTO account_funding (account_id, symbol, funding_time, side, size, mark_price, rate, amount)
            VALUES (${at.account_id}, ${at.symbol}, ${new Date(
            payment.time
          )}, ${held.side}, ${held.size}, ${payment.mark},
              ${payment.rate}, ${amount})
            ON CONFLICT DO NOTHING RETURNING account_id`
          if (inserted.length > 0) total += toMoney(amount)
        }
        if (total !== 0n) {
          yield* sql`
            UPDATE accounts SET current_cash = current_cash + ${moneyText(total)}::numeric, updated_at = ${until}
            WHERE id = ${at.account_id}`
        }
        yield* sql`
          UPDATE account_positions SET funded_until = ${until}
          WHERE account_id = ${at.account_id} AND symbol = ${at.symbol}`
        return fromMoney(total)
      }))

    const funding = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: Schema.Struct({
        symbol: Schema.String,
        time: IsoTimestamp,
        side: Schema.Literal("long", "short"),
        size: Numeric,
        mark_price: Numeric,
        rate: Schema.Number,
        amount: Numeric
      }),
      execute: (q) =>
        sql`
        SELECT symbol, funding_time AS time, side, size, mark_price, rate, amount FROM account_funding
        WHERE account_id = ${q.account_id} ORDER BY funding_time DESC, symbol LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** The run's decision in the account's decision log (the trader export's `decision_logs`). */
    const logDecision = (row: {
      readonly account_id: AccountId
      readonly decision_time: Date
      readonly symbol: string
      readonly operation: string
      readonly target_portion_of_balance: number | null
      readonly leverage: number | null
      readonly reason: string | null
    }) => sql`INSERT INTO account_decision_logs ${sql.insert(row)} ON CONFLICT DO NOTHING`.pipe(Effect.asVoid)

    /** Every open position, to be watched against the mark (its exits, its liquidation) and charged funding. */
    const watched = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PositionRow,
      execute: () => sql`SELECT * FROM account_positions ORDER BY account_id, symbol`
    })

    /** Exits recorded but not settled (their process stopped in between). */
    const openExits = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OrderRow,
      execute: () =>
        sql`SELECT * FROM automation_orders WHERE trigger <> 'run' AND status IN ('pending', 'submitted') ORDER BY id`
    })

    /** Limit and stop entries on paper waiting for the mark to reach them (a venue's rest there). */
    const openEntries = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OrderRow,
      execute: () => sql`SELECT * FROM automation_orders WHERE status = 'open' AND route = 'paper' ORDER BY id`
    })

    /** The entries a binding left resting for a symbol, on paper or at the venue. */
    const openEntriesOf = SqlSchema.findAll({
      Request: Schema.Struct({ binding_id: BindingId, symbol: Schema.String }),
      Result: OrderRow,
      execute: (q) =>
        sql`
        SELECT * FROM automation_orders WHERE binding_id = ${q.binding_id} AND symbol = ${q.symbol} AND status = 'open'
        ORDER BY id`
    })

    /** A binding's decision replaces the entries its earlier ones left open for the symbol. */
    const cancelOpenEntries = (at: { readonly binding_id: BindingId; readonly symbol: string }) =>
      sql`
        UPDATE automation_orders SET status = 'cancelled', error = 'replaced by a later decision'
        WHERE binding_id = ${at.binding_id} AND symbol = ${at.symbol} AND status = 'open'`.pipe(Effect.asVoid)

    /** The account's free cash now, to size an entry that fills later. */
    const freeCash = (id: AccountId) =>
      Effect.map(
        sql<{ current_cash: string }>`SELECT current_cash FROM accounts WHERE id = ${id}`,
        ([row]) => Number(row?.current_cash ?? 0)
      )

    const orderByKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: OrderRow,
      execute: (key) => sql`SELECT * FROM automation_orders WHERE idempotency_key = ${key} AND status = 'pending'`
    })

    /** Whose and which route the position's last fill was: its exit goes the same way. */
    const lastFillOf = SqlSchema.findOne({
      Request: Schema.Struct({ account_id: AccountId, symbol: Schema.String }),
      Result: OrderRow.pipe(Schema.pick("route", "binding_id", "program_id", "user_id")),
      execute: (q) =>
        sql`
        SELECT route, binding_id, program_id, user_id FROM automation_orders
        WHERE account_id = ${q.account_id} AND symbol = ${q.symbol} AND status = 'filled' ORDER BY id DESC LIMIT 1`
    })

    /** The route of the position's last fill: `venue` positions are the venue's to liquidate and charge funding. */
    const routeOf = (at: { readonly account_id: AccountId; readonly symbol: string }) =>
      Effect.map(lastFillOf(at), Option.match({ onNone: () => null, onSome: (fill) => fill.route }))

    /** Under the account's lock: the position with its last fill, and what backs it; none when there is no position (left). */
    const lockedPosition = (at: { readonly account_id: AccountId; readonly symbol: string }) =>
      Effect.gen(function*() {
        const backingOf = yield* lockAccount(at.account_id)
        const held = yield* position(at)
        if (Option.isNone(held)) return Option.none()
        return Option.map(yield* lastFillOf(at), (last) => ({ held: held.value, last, backingOf }))
      })

    /**
     * Records the order that closes `held` for `trigger`, with `level` as its `trigger_price`, by
     * the route, binding and program of its last fill; its key (the trigger, the position and when
     * it opened) makes it one order whichever replica, or pass, records it.
     */
    const recordClose = (
      held: PositionRow,
      last: {
        readonly route: string
        readonly binding_id: BindingId | null
        readonly program_id: ProgramId | null
        readonly user_id: number
      },
      trigger: ExitTrigger | "flatten",
      level: number,
      now: Date
    ) => {
      const key = `${trigger}:${held.account_id}:${held.symbol}:${Date.parse(held.opened_at)}`
      return sql`
        INSERT INTO automation_orders (binding_id, program_id, user_id, account_id, symbol, exchange, route, trigger,
          trigger_price, idempotency_key, side, quantity, leverage, status, created_at)
        VALUES (${last.binding_id}, ${last.program_id}, ${last.user_id}, ${held.account_id}, ${held.symbol}, ${held.exchange},
          ${last.route}, ${trigger}, ${level}, ${key}, ${held.side === "long" ? "sell" : "buy"}, ${held.size},
          ${held.leverage}, 'pending', ${now})
        ON CONFLICT (idempotency_key) DO NOTHING`.pipe(Effect.zipRight(orderByKey(key)))
    }

    /**
     * Records the order that closes a position whose mark reached its liquidation price (on paper:
     * a venue liquidates its own), stop loss or take profit, if it still does under the account's
     * lock, with that price as its `trigger_price` (see `recordClose`). A take profit or stop loss
     * resting at the venue is the venue's to fill. None when there is nothing (left) to close.
     */
    const recordExit = (
      at: { readonly account_id: AccountId; readonly symbol: string },
      mark: number,
      margin: MarginTable,
      now: Date
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* lockedPosition(at)
        if (Option.isNone(locked)) return Option.none()
        const { backingOf, held, last } = locked.value
        const liquidation = last.route === "paper"
          ? liquidationPrice(held, margin, backingOf(held))
          : held.side === "long"
          ? 0
          : Infinity
        // The trail follows the marks the watcher sees, up to this one.
        const best = held.trail_best === null ? null : bestOf(held.side, held.trail_best, mark)
        const stop = stopOf(held.side, held.stop_loss_price, held.trailing_stop, held.trail_best ?? held.entry_price)
        const atVenue = new Set(held.venue_protection?.map((p) => p.kind))
        const trigger: ExitTrigger | null = exitTriggered(
          {
            ...held,
            take_profit_price: atVenue.has("take_profit") ? null : held.take_profit_price,
            stop_loss_price: atVenue.has("stop_loss") ? null : stop
          },
          mark,
          liquidation
        )
        if (trigger === null) {
          if (best !== null && best !== held.trail_best) {
            yield* sql`UPDATE account_positions SET trail_best = ${best} WHERE account_id = ${at.account_id} AND symbol = ${at.symbol}`
          }
          return Option.none()
        }
        const level = trigger === "liquidation"
          ? liquidation
          : trigger === "stop_loss"
          ? stop!
          : held.take_profit_price!
        return yield* recordClose(held, last, trigger, level, now)
      }))

    /**
     * Records the order that closes a position because its account is being flattened (the risk
     * firewall), as `recordExit` records a take profit, at the mark. None when it is closed.
     */
    const recordFlatten = (
      at: { readonly account_id: AccountId; readonly symbol: string },
      mark: number,
      now: Date
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* lockedPosition(at)
        if (Option.isNone(locked)) return Option.none()
        return yield* recordClose(locked.value.held, locked.value.last, "flatten", mark, now)
      }))

    /** The account's venue orders on `exchange` in `status`: sent with no answer yet (`submitted`), or resting there (`open`). */
    const venueOrders = SqlSchema.findAll({
      Request: Schema.Struct({
        account_id: AccountId,
        exchange: Exchange,
        status: Schema.Literal("submitted", "open")
      }),
      Result: OrderRow,
      execute: (q) =>
        sql`
        SELECT * FROM automation_orders WHERE account_id = ${q.account_id} AND exchange = ${q.exchange}
          AND route = 'venue' AND status = ${q.status} ORDER BY id`
    })

    /** The account's positions held at `exchange`. */
    const positionsAt = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, exchange: Exchange }),
      Result: PositionRow,
      execute: (q) =>
        sql`SELECT * FROM account_positions WHERE account_id = ${q.account_id} AND exchange = ${q.exchange} ORDER BY symbol`
    })

    /**
     * Records an order the reconciliation books (a fill the venue made that the ledger missed, or a
     * position it adopts), as pending at the venue under `key`, one order whichever pass records it.
     */
    const recordBooking = (booking: {
      readonly account_id: AccountId
      readonly user_id: number
      readonly symbol: string
      readonly exchange: Exchange
      readonly trigger: "reconciliation" | "take_profit" | "stop_loss"
      readonly trigger_price: number | null
      readonly side: "buy" | "sell"
      readonly quantity: number
      readonly leverage: number
      readonly key: string
      readonly at: Date
    }) =>
      sql`
        INSERT INTO automation_orders (user_id, account_id, symbol, exchange, route, trigger, trigger_price,
          idempotency_key, side, quantity, leverage, status, created_at)
        VALUES (${booking.user_id}, ${booking.account_id}, ${booking.symbol}, ${booking.exchange}, 'venue',
          ${booking.trigger}, ${booking.trigger_price}, ${booking.key}, ${booking.side}, ${booking.quantity},
          ${booking.leverage}, 'submitted', ${booking.at})
        ON CONFLICT (idempotency_key) DO NOTHING`.pipe(Effect.zipRight(orderByKeyAny(booking.key)))

    const orderByKeyAny = SqlSchema.findOne({
      Request: Schema.String,
      Result: OrderRow,
      execute: (key) => sql`SELECT * FROM automation_orders WHERE idempotency_key = ${key}`
    })

    /** Marks a venue order resting there, with the venue's id. */
    const markOpen = (id: number, venueOrderId: string) =>
      sql`
        UPDATE automation_orders SET status = 'open', venue_order_id = ${venueOrderId}
        WHERE id = ${id} AND status IN ('pending', 'submitted')`.pipe(Effect.asVoid)

    /** Sends a pending order again after the venue said it never received it. */
    const markPending = (id: number) =>
      sql`UPDATE automation_orders SET status = 'pending' WHERE id = ${id} AND status = 'submitted'`.pipe(Effect.asVoid)

    /** Cancels a resting order the venue cancelled (or a later decision replaced). */
    const cancel = (id: number, error: string) =>
      sql`
        UPDATE automation_orders SET status = 'cancelled', error = ${error}
        WHERE id = ${id} AND status IN ('pending', 'submitted', 'open')`.pipe(Effect.asVoid)

    /** The conditional orders protecting a position at the venue (none: null). */
    const setProtection = (
      at: { readonly account_id: AccountId; readonly symbol: string },
      protection: ReadonlyArray<VenueProtection> | null
    ) =>
      sql`
        UPDATE account_positions SET venue_protection = ${protection === null ? null : JSON.stringify(protection)}
        WHERE account_id = ${at.account_id} AND symbol = ${at.symbol}`.pipe(Effect.asVoid)

    /** Flags a position the ledger took over from the venue. */
    const markAdopted = (at: { readonly account_id: AccountId; readonly symbol: string }) =>
      sql`UPDATE account_positions SET adopted = true WHERE account_id = ${at.account_id} AND symbol = ${at.symbol}`
        .pipe(Effect.asVoid)

    /** The leverage and margin mode last set on the venue for the account's symbol. */
    const venueSetting = SqlSchema.findOne({
      Request: Schema.Struct({ account_id: AccountId, exchange: Exchange, symbol: Schema.String }),
      Result: Schema.Struct({ leverage: Schema.Int, margin_mode: Schema.Literal("cross", "isolated") }),
      execute: (q) =>
        sql`
        SELECT leverage, margin_mode FROM venue_symbol_settings
        WHERE account_id = ${q.account_id} AND exchange = ${q.exchange} AND symbol = ${q.symbol}`
    })

    const saveVenueSetting = (setting: {
      readonly account_id: AccountId
      readonly exchange: Exchange
      readonly symbol: string
      readonly leverage: number
      readonly margin_mode: "cross" | "isolated"
    }) =>
      sql`
        INSERT INTO venue_symbol_settings ${sql.insert(setting)}
        ON CONFLICT (account_id, exchange, symbol) DO UPDATE SET leverage = EXCLUDED.leverage,
          margin_mode = EXCLUDED.margin_mode`.pipe(Effect.asVoid)

    /** The account's cash with its positions' margins: what the venue's balance is compared with. */
    const cashOf = (id: AccountId) =>
      Effect.map(
        sql<{ total: string }>`SELECT current_cash + frozen_cash AS total FROM accounts WHERE id = ${id}`,
        ([row]) => Number(row?.total ?? 0)
      )

    /** The account's margin mode. */
    const marginMode = (id: AccountId) =>
      Effect.map(
        sql<{ margin_mode: string }>`SELECT margin_mode FROM accounts WHERE id = ${id}`,
        ([row]) => row?.margin_mode === "isolated" ? "isolated" as const : "cross" as const
      )

    return {
      venueOrders,
      openEntriesOf,
      positionsAt,
      recordBooking,
      markOpen,
      markPending,
      cancel,
      setProtection,
      markAdopted,
      venueSetting,
      saveVenueSetting,
      marginMode,
      cashOf,
      orderOfRun,
      orderOfKey,
      recordFlatten,
      orderById,
      insertOrder,
      markSubmitted,
      reject,
      position,
      positions,
      orders,
      fill,
      chargeFunding,
      openEntries,
      cancelOpenEntries,
      freeCash,
      funding,
      routeOf,
      logDecision,
      watched,
      openExits,
      recordExit
    } as const
  })
}) {}
