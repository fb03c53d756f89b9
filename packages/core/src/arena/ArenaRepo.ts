import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId, AccountType } from "../accounts/Account.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"

const Numeric = Schema.NumberFromString
const NullableNumeric = Schema.NullOr(Numeric)

/** An account the refresher measures: its cash (free and in margins), whether it is on the dashboard, and its fills summed (null without fills). */
const MeasuredAccount = Schema.Struct({
  account_id: AccountId,
  cash: Numeric,
  on_dashboard: Schema.Boolean,
  realized_pnl: NullableNumeric,
  fees: NullableNumeric,
  last_order_id: Schema.NullOr(Schema.Int)
})
export type MeasuredAccount = typeof MeasuredAccount.Type

const OpenPosition = Schema.Struct({
  account_id: AccountId,
  symbol: Schema.String,
  exchange: Exchange,
  side: Schema.Literal("long", "short"),
  size: Numeric,
  entry_price: Numeric
})
export type OpenPosition = typeof OpenPosition.Type

/** An account's fills summed, and its positions marked; written by one pass. */
export interface PnlFigures {
  readonly account_id: AccountId
  readonly realized_pnl: number
  readonly unrealized_pnl: number
  readonly fees: number
  readonly last_order_id: number
}

const PnlRow = Schema.Struct({
  account_id: AccountId,
  name: Schema.String,
  realized_pnl: Numeric,
  unrealized_pnl: Numeric,
  fees: Numeric,
  error: Schema.NullOr(Schema.String),
  refreshed_at: IsoTimestamp
})

/** An account on the dashboard, as the leaderboard names it. */
const DashboardAccount = Schema.Struct({
  account_id: AccountId,
  name: Schema.String,
  owner: Schema.String,
  account_type: AccountType,
  model: Schema.NullOr(Schema.String),
  ai_trading: Schema.Boolean,
  program_bindings: Schema.Int
})
export type DashboardAccount = typeof DashboardAccount.Type

/** One hour of an account's equity. */
const EquityHour = Schema.Struct({
  account_id: AccountId,
  hour: Schema.DateFromSelf,
  open: Numeric,
  high: Numeric,
  low: Numeric,
  close: Numeric,
  /** When `close` was measured. */
  updated_at: Schema.DateFromSelf
})
export type EquityHour = typeof EquityHour.Type

/** An account's closing fills since a time: how many, and how many gained after their fee. */
const ClosingFills = Schema.Struct({ account_id: AccountId, trades: Schema.Int, wins: Schema.Int })
export type ClosingFills = typeof ClosingFills.Type

/** SQL for arena PnL and the leaderboard; no rules here. */
export class ArenaRepo extends Effect.Service<ArenaRepo>()("@trading-platform/core/ArenaRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Accounts with fills or on the dashboard, in one statement. */
    const measured = SqlSchema.findAll({
      Request: Schema.Void,
      Result: MeasuredAccount,
      execute: () =>
        sql`
        SELECT a.id AS account_id, a.current_cash + a.frozen_cash AS cash, a.show_on_dashboard AS on_dashboard,
          f.realized_pnl, f.fees, f.last_order_id
        FROM accounts a
        LEFT JOIN (
          SELECT account_id, COALESCE(SUM(realized_pnl), 0) AS realized_pnl, COALESCE(SUM(fee), 0) AS fees,
            MAX(id) AS last_order_id
          FROM automation_orders WHERE status = 'filled' GROUP BY account_id
        ) f ON f.account_id = a.id
        WHERE a.show_on_dashboard OR f.account_id IS NOT NULL
        ORDER BY a.id`
    })

    /** Every open position, in one statement (the pass picks those of the accounts it measures). */
    const positions = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OpenPosition,
      execute: () =>
        sql`SELECT account_id, symbol, exchange, side, size, entry_price FROM account_positions ORDER BY account_id, symbol`
    })

    const savePnl = (rows: ReadonlyArray<PnlFigures>, at: Date) =>
      rows.length === 0 ? Effect.void : sql`
        INSERT INTO arena_pnl ${sql.insert(rows.map((r) => ({ ...r, error: null, refreshed_at: at })))}
        ON CONFLICT (account_id) DO UPDATE SET realized_pnl = EXCLUDED.realized_pnl, unrealized_pnl = EXCLUDED.unrealized_pnl,
          fees = EXCLUDED.fees, last_order_id = EXCLUDED.last_order_id, error = NULL, refreshed_at = EXCLUDED.refreshed_at`
        .pipe(Effect.asVoid)

    /** Keeps an account's last figures and notes why it could not be marked. */
    const saveError = (accountId: AccountId, error: string) =>
      sql`UPDATE arena_pnl SET error = ${error} WHERE account_id = ${accountId}`.pipe(Effect.asVoid)

    /** Adds each account's equity now to its hour: the first of the hour opens it, every one moves its high, low and close. */
    const recordEquity = (
      rows: ReadonlyArray<{ readonly account_id: AccountId; readonly equity: number }>,
      at: Date
    ) => {
      const hour = new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000)
      return rows.length === 0 ? Effect.void : sql`
        INSERT INTO arena_equity ${
        sql.insert(rows.map((r) => ({
          account_id: r.account_id,
          hour,
          open: r.equity,
          high: r.equity,
          low: r.equity,
          close: r.equity,
          updated_at: at
        })))
      }
        ON CONFLICT (account_id, hour) DO UPDATE SET high = GREATEST(arena_equity.high, EXCLUDED.close),
          low = LEAST(arena_equity.low, EXCLUDED.close), close = EXCLUDED.close, updated_at = EXCLUDED.updated_at`
        .pipe(Effect.asVoid)
    }

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

    /** The dashboard's accounts that have been measured, with what trades them (an AI trader enabled, program bindings enabled). */
    const dashboard = SqlSchema.findAll({
      Request: Schema.Void,
      Result: DashboardAccount,
      execute: () =>
        sql`
        SELECT a.id AS account_id, a.name, u.username AS owner, a.account_type, a.model,
          COALESCE(t.enabled, false) AS ai_trading,
          (SELECT count(*)::integer FROM automation_bindings b WHERE b.account_id = a.id AND b.enabled) AS program_bindings
        FROM accounts a
        JOIN users u ON u.id = a.user_id
        LEFT JOIN ai_traders t ON t.account_id = a.id
        WHERE a.show_on_dashboard AND EXISTS (SELECT 1 FROM arena_equity e WHERE e.account_id = a.id)
        ORDER BY a.id`
    })

    /** The dashboard's equity hours from `since` on, with each account's last hour before it (the window's baseline). */
    const equityHours = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: EquityHour,
      execute: (since) =>
        sql`
        SELECT e.account_id, e.hour, e.open, e.high, e.low, e.close, e.updated_at
        FROM arena_equity e JOIN accounts a ON a.id = e.account_id
        WHERE a.show_on_dashboard AND (e.hour >= ${since} OR e.hour = (
          SELECT MAX(b.hour) FROM arena_equity b WHERE b.account_id = e.account_id AND b.hour < ${since}))
        ORDER BY e.account_id, e.hour`
    })

    /** The dashboard's fills that closed a position since `since`. */
    const closingFills = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: ClosingFills,
      execute: (since) =>
        sql`
        SELECT o.account_id, count(*)::integer AS trades,
          count(*) FILTER (WHERE o.realized_pnl - COALESCE(o.fee, 0) > 0)::integer AS wins
        FROM automation_orders o JOIN accounts a ON a.id = o.account_id
        WHERE a.show_on_dashboard AND o.status = 'filled' AND o.closed_quantity > 0 AND o.filled_at >= ${since}
        GROUP BY o.account_id`
    })

    return {
      measured,
      positions,
      savePnl,
      saveError,
      recordEquity,
      unsynced,
      ofUser,
      dashboard,
      equityHours,
      closingFills
    } as const
  })
}) {}
