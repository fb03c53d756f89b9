import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { ProgramId } from "../programs/Program.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"
import { BindingId, OrderRoute, OrderStatus, RunId } from "./Automation.js"
import { applyFill, type Held } from "./Ledger.js"

const Numeric = Schema.NumberFromString

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
  side: Schema.Literal("buy", "sell"),
  quantity: Numeric,
  leverage: Schema.Int,
  status: OrderStatus,
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
  opened_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type PositionRow = typeof PositionRow.Type

const NewOrder = Schema.Struct({
  run_id: RunId,
  binding_id: BindingId,
  program_id: ProgramId,
  user_id: UserId,
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  route: OrderRoute,
  side: Schema.Literal("buy", "sell"),
  quantity: Schema.Number,
  leverage: Schema.Int,
  status: OrderStatus,
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type NewOrder = typeof NewOrder.Type

/** A fill as the venue (or the paper ledger) reports it. */
export interface Fill {
  readonly price: number
  readonly fee: number
  readonly venue_order_id: string | null
  readonly at: Date
}

/** SQL for orders, positions and the cash they move; a fill is one transaction. */
export class LedgerRepo extends Effect.Service<LedgerRepo>()("@trading-platform/core/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const orderOfRun = SqlSchema.findOne({
      Request: RunId,
      Result: OrderRow,
      execute: (id) => sql`SELECT * FROM automation_orders WHERE run_id = ${id}`
    })

    /** Records a run's order; the run's earlier attempt may have recorded it already, and that one wins. */
    const insertOrder = (order: NewOrder) =>
      Effect.flatMap(
        Schema.encode(NewOrder)(order),
        (row) => sql`INSERT INTO automation_orders ${sql.insert(row)} ON CONFLICT (run_id) DO NOTHING`
      ).pipe(
        Effect.zipRight(orderOfRun(order.run_id)),
        Effect.flatMap(Option.match({ onNone: () => Effect.die(new Error("order vanished")), onSome: Effect.succeed }))
      )

    /** Marks a pending order as sent to the venue; false when it was not pending (sent before a crash). */
    const markSubmitted = (id: number) =>
      Effect.map(
        sql`UPDATE automation_orders SET status = 'submitted' WHERE id = ${id} AND status = 'pending' RETURNING id`,
        (rows) => rows.length > 0
      )

    const reject = (id: number, error: string) =>
      sql`UPDATE automation_orders SET status = 'rejected', error = ${error} WHERE id = ${id} AND status IN ('pending', 'submitted')`
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
     */
    const fill = (order: OrderRow, f: Fill) =>
      sql.withTransaction(Effect.gen(function*() {
        // The account row's lock orders fills of one account.
        yield* sql`SELECT id FROM accounts WHERE id = ${order.account_id} FOR UPDATE`
        const current = yield* position({ account_id: order.account_id, symbol: order.symbol })
        const held: Held | null = Option.getOrNull(current)
        const effect = applyFill(held, { ...order, ...f })
        const filled = yield* sql`
          UPDATE automation_orders SET status = 'filled', price = ${f.price}, fee = ${f.fee}, realized_pnl = ${effect.realized}, closed_quantity = ${effect.closed},
            venue_order_id = ${f.venue_order_id}, filled_at = ${f.at}, error = NULL
          WHERE id = ${order.id} AND status IN ('pending', 'submitted') RETURNING id`
        if (filled.length === 0) return false
        yield* sql`
          UPDATE accounts SET current_cash = current_cash + ${effect.cash}, frozen_cash = frozen_cash + ${effect.frozen},
            updated_at = ${f.at}
          WHERE id = ${order.account_id}`
        const p = effect.position
        if (p === null) {
          yield* sql`DELETE FROM account_positions WHERE account_id = ${order.account_id} AND symbol = ${order.symbol}`
        } else {
          yield* sql`
            INSERT INTO account_positions (account_id, symbol, exchange, side, size, entry_price, leverage, margin, opened_at, updated_at)
            VALUES (${order.account_id}, ${order.symbol}, ${order.exchange}, ${p.side}, ${p.size}, ${p.entry_price}, ${p.leverage},
              ${p.margin}, ${f.at}, ${f.at})
            ON CONFLICT (account_id, symbol) DO UPDATE SET side = EXCLUDED.side, size = EXCLUDED.size,
              entry_price = EXCLUDED.entry_price, leverage = EXCLUDED.leverage, margin = EXCLUDED.margin,
              opened_at = CASE WHEN account_positions.side = EXCLUDED.side THEN account_positions.opened_at ELSE EXCLUDED.opened_at END,
              updated_at = EXCLUDED.updated_at`
        }
        // Two fills of one account, symbol and side in the same millisecond are one trade row of the export.
        yield* sql`
          INSERT INTO account_trades (account_id, trade_time, symbol, side, quantity, price, fee, realized_pnl)
          VALUES (${order.account_id}, ${f.at}, ${order.symbol}, ${order.side}, ${order.quantity}, ${f.price}, ${f.fee},
            ${effect.closed > 0 ? effect.realized : null})
          ON CONFLICT DO NOTHING`
        return true
      }))

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

    return { orderOfRun, insertOrder, markSubmitted, reject, position, positions, orders, fill, logDecision } as const
  })
}) {}
