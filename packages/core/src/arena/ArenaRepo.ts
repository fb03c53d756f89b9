import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"

const Numeric = Schema.NumberFromString

/** An account's fills, summed. */
const FillTotals = Schema.Struct({
  account_id: AccountId,
  realized_pnl: Numeric,
  fees: Numeric,
  last_order_id: Schema.Int
})
export type FillTotals = typeof FillTotals.Type

const PnlRow = Schema.Struct({
  account_id: AccountId,
  name: Schema.String,
  realized_pnl: Numeric,
  unrealized_pnl: Numeric,
  fees: Numeric,
  error: Schema.NullOr(Schema.String),
  refreshed_at: IsoTimestamp
})

/** SQL for arena PnL; no rules here. */
export class ArenaRepo extends Effect.Service<ArenaRepo>()("@trading-platform/core/ArenaRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const fillTotals = SqlSchema.findAll({
      Request: Schema.Void,
      Result: FillTotals,
      execute: () =>
        sql`
        SELECT account_id, COALESCE(SUM(realized_pnl), 0) AS realized_pnl, COALESCE(SUM(fee), 0) AS fees,
          MAX(id) AS last_order_id
        FROM automation_orders WHERE status = 'filled' GROUP BY account_id ORDER BY account_id`
    })

    const save = (
      row: FillTotals & { readonly unrealized_pnl: number; readonly error: string | null; readonly at: Date }
    ) =>
      sql`
        INSERT INTO arena_pnl (account_id, realized_pnl, unrealized_pnl, fees, last_order_id, error, refreshed_at)
        VALUES (${row.account_id}, ${row.realized_pnl}, ${row.unrealized_pnl}, ${row.fees}, ${row.last_order_id}, ${row.error}, ${row.at})
        ON CONFLICT (account_id) DO UPDATE SET realized_pnl = EXCLUDED.realized_pnl, unrealized_pnl = EXCLUDED.unrealized_pnl,
          fees = EXCLUDED.fees, last_order_id = EXCLUDED.last_order_id, error = EXCLUDED.error, refreshed_at = EXCLUDED.refreshed_at`
        .pipe(Effect.asVoid)

    /** Keeps an account's last figures and notes why it could not be marked. */
    const saveError = (accountId: AccountId, error: string) =>
      sql`UPDATE arena_pnl SET error = ${error} WHERE account_id = ${accountId}`.pipe(Effect.asVoid)

    /** Accounts whose newest fill is not in their PnL yet, or whose last refresh failed; and how many failed. */
    const unsynced = Effect.flatMap(
      sql`
        SELECT count(*)::integer AS unsynced, count(a.error)::integer AS failed, MIN(a.error) AS error
        FROM (SELECT account_id, MAX(id) AS last_id FROM automation_orders WHERE status = 'filled' GROUP BY account_id) f
        LEFT JOIN arena_pnl a ON a.account_id = f.account_id
        WHERE a.account_id IS NULL OR a.last_order_id < f.last_id OR a.error IS NOT NULL`,
      Schema.decodeUnknown(
        Schema.Array(Schema.Struct({ unsynced: Schema.Int, failed: Schema.Int, error: Schema.NullOr(Schema.String) }))
      )
    ).pipe(Effect.map((rows) => rows[0] ?? { unsynced: 0, failed: 0, error: null }))

    const ofUser = SqlSchema.findAll({
      Request: UserId,
      Result: PnlRow,
      execute: (userId) =>
        sql`
        SELECT a.account_id, acc.name, a.realized_pnl, a.unrealized_pnl, a.fees, a.error, a.refreshed_at
        FROM arena_pnl a JOIN accounts acc ON acc.id = a.account_id
        WHERE acc.user_id = ${userId} ORDER BY a.account_id`
    })

    return { fillTotals, save, saveError, unsynced, ofUser } as const
  })
}) {}
