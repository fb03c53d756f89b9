import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { RiskMode, RiskSource } from "../risk/Risk.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"

const Money = Schema.NullOr(Schema.NumberFromString)

export const RiskRow = Schema.Struct({
  account_id: AccountId,
  mode: RiskMode,
  resume_at: Schema.NullOr(IsoTimestamp),
  reason: Schema.NullOr(Schema.String),
  max_position_notional: Money,
  max_total_notional: Money,
  max_leverage: Schema.NullOr(Schema.Int),
  max_orders_per_minute: Schema.NullOr(Schema.Int),
  max_daily_loss: Money,
  max_drawdown_percent: Schema.NullOr(Schema.Number),
  peak_equity: Money,
  day_start: Schema.NullOr(IsoTimestamp),
  day_start_equity: Money,
  updated_at: IsoTimestamp
})
export type RiskRow = typeof RiskRow.Type

export const RiskEventRow = Schema.Struct({
  id: Schema.Int,
  account_id: AccountId,
  from_mode: RiskMode,
  to_mode: RiskMode,
  reason: Schema.NullOr(Schema.String),
  source: RiskSource,
  created_at: IsoTimestamp
})
export type RiskEventRow = typeof RiskEventRow.Type

/** The columns of a row that change together. */
export interface RiskEdit {
  readonly mode: RiskMode
  readonly resume_at: Date | null
  readonly reason: string | null
  readonly max_position_notional: number | null
  readonly max_total_notional: number | null
  readonly max_leverage: number | null
  readonly max_orders_per_minute: number | null
  readonly max_daily_loss: number | null
  readonly max_drawdown_percent: number | null
  readonly peak_equity: number | null
  readonly day_start: Date | null
  readonly day_start_equity: number | null
}

/** SQL for the accounts' risk state and the log of their mode changes; no rules here. */
export class RiskRepo extends Effect.Service<RiskRepo>()("@trading-platform/core/RiskRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The account's row, created (active, no limits) on first use and locked until the transaction ends. */
    const lock = (id: AccountId, now: Date) =>
      Effect.zipRight(
        sql`INSERT INTO account_risk (account_id, updated_at) VALUES (${id}, ${now}) ON CONFLICT DO NOTHING`,
        SqlSchema.single({
          Request: AccountId,
          Result: RiskRow,
          execute: (account) => sql`SELECT * FROM account_risk WHERE account_id = ${account} FOR UPDATE`
        })(id)
      )

    const find = SqlSchema.findOne({
      Request: AccountId,
      Result: RiskRow,
      execute: (id) => sql`SELECT * FROM account_risk WHERE account_id = ${id}`
    })

    const save = (id: AccountId, edit: RiskEdit, now: Date) =>
      sql`UPDATE account_risk SET ${sql.update({ ...edit, updated_at: now })} WHERE account_id = ${id}`.pipe(
        Effect.asVoid
      )

    const insertEvent = SqlSchema.single({
      Request: Schema.Struct({
        account_id: AccountId,
        from_mode: RiskMode,
        to_mode: RiskMode,
        reason: Schema.NullOr(Schema.String),
        source: RiskSource,
        created_at: Schema.DateFromSelf
      }),
      Result: RiskEventRow,
      execute: (row) => sql`INSERT INTO account_risk_events ${sql.insert(row)} RETURNING *`
    })

    const events = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: RiskEventRow,
      execute: (q) =>
        sql`
        SELECT * FROM account_risk_events WHERE account_id = ${q.account_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** The account's owner, cash and margins, to value it and address its events. */
    const balances = (id: AccountId) =>
      Effect.map(
        sql<{ user_id: number; current_cash: string; frozen_cash: string }>`
          SELECT user_id, current_cash, frozen_cash FROM accounts WHERE id = ${id}`,
        ([row]) =>
          Option.fromNullable(row).pipe(Option.map((r) => ({
            user_id: UserId.make(r.user_id),
            cash: Number(r.current_cash) + Number(r.frozen_cash)
          })))
      )

    /** Orders of the account's programs and people (not exits) the firewall let through since `since`, leaving out refused ones and `except`. */
    const ordersSince = (id: AccountId, since: Date, except: number) =>
      Effect.map(
        sql<{ n: number | string }>`
          SELECT count(*) AS n FROM automation_orders
          WHERE account_id = ${id} AND trigger = 'run' AND risk_passed_at > ${since} AND status <> 'rejected'
            AND id <> ${except}`,
        ([row]) => Number(row?.n ?? 0)
      )

    /** The account's orders the firewall let through that have not filled (nor failed) yet, but `except`. */
    const inFlight = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, except: Schema.Int }),
      Result: Schema.Struct({
        symbol: Schema.String,
        exchange: Exchange,
        side: Schema.Literal("buy", "sell"),
        quantity: Schema.NumberFromString
      }),
      execute: (q) =>
        sql`
          SELECT symbol, exchange, side, quantity FROM automation_orders
          WHERE account_id = ${q.account_id} AND risk_passed_at IS NOT NULL AND status IN ('pending', 'submitted', 'open')
            AND id <> ${q.except}`
    })

    /** Records that the firewall let the order through. */
    const passed = (order: number, at: Date) =>
      sql`UPDATE automation_orders SET risk_passed_at = ${at} WHERE id = ${order}`.pipe(Effect.asVoid)

    /**
     * Accounts the watcher values: those with positions and a limit on their equity (daily loss,
     * drawdown), and those flattening or paused until a time now past.
     */
    const due = (now: Date) =>
      Effect.map(
        sql<{ account_id: number }>`
          SELECT account_id FROM account_risk r
          WHERE mode = 'flatten' OR (mode = 'paused' AND resume_at IS NOT NULL AND resume_at <= ${now})
            OR ((max_drawdown_percent IS NOT NULL OR max_daily_loss IS NOT NULL)
              AND EXISTS (SELECT 1 FROM account_positions p WHERE p.account_id = r.account_id))`,
        (rows) => rows.map((r) => AccountId.make(r.account_id))
      )

    /** Tells every instance's streams about a mode change, when the transaction commits. */
    const notify = (channel: string, payload: string) =>
      sql`SELECT pg_notify(${channel}, ${payload})`.pipe(Effect.asVoid)

    return { lock, find, save, insertEvent, events, balances, ordersSince, inFlight, passed, due, notify } as const
  })
}) {}
