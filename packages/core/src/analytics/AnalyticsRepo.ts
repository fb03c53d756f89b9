import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { UserId } from "../users/User.js"
import { SummaryDimension, SummarySource } from "./ProgramPerformance.js"

const SummaryQuery = Schema.Struct({
  user_id: UserId,
  source: SummarySource,
  dimension: SummaryDimension,
  from: Schema.optional(Schema.DateFromSelf),
  to: Schema.optional(Schema.DateFromSelf),
  account_id: Schema.optional(AccountId)
})
type SummaryQuery = typeof SummaryQuery.Encoded

/** One group: `key` is the program id, the symbol or the account id; `name` the program's or account's name. */
const SummaryRow = Schema.Struct({
  key: Schema.String,
  name: Schema.NullOr(Schema.String),
  total_trades: Schema.Int,
  winning_trades: Schema.Int,
  symbols_traded: Schema.Int,
  total_pnl: Schema.NumberFromString
})
export type SummaryRow = typeof SummaryRow.Type

/** SQL for analytics; no rules here. */
export class AnalyticsRepo extends Effect.Service<AnalyticsRepo>()("@trading-platform/core/AnalyticsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const filters = (q: SummaryQuery, alias: "b" | "o", time: "finished_at" | "filled_at") => [
      sql`${sql(alias)}.user_id = ${q.user_id}`,
      ...(q.from === undefined ? [] : [sql`${sql(alias)}.${sql(time)} >= ${q.from}`]),
      ...(q.to === undefined ? [] : [sql`${sql(alias)}.${sql(time)} < ${q.to}`]),
      ...(q.account_id === undefined ? [] : [sql`${sql(alias)}.account_id = ${q.account_id}`])
    ]

    /** The group of each dimension (rows of deleted programs, or backtests without an account, are left out). */
    const group = (dimension: SummaryQuery["dimension"], alias: "b" | "o") => {
      switch (dimension) {
        case "program":
          return {
            key: sql`${sql(alias)}.program_id::text`,
            name: sql`p.name`,
            join: sql`JOIN programs p ON p.id = ${sql(alias)}.program_id`,
            by: sql`${sql(alias)}.program_id, p.name`
          }
        case "symbol":
          return { key: sql`${sql(alias)}.symbol`, name: sql`NULL::text`, join: sql``, by: sql`${sql(alias)}.symbol` }
        case "account":
          return {
            key: sql`${sql(alias)}.account_id::text`,
            name: sql`a.name`,
            join: sql`JOIN accounts a ON a.id = ${sql(alias)}.account_id`,
            by: sql`${sql(alias)}.account_id, a.name`
          }
      }
    }

    /** Completed backtests, summed per group. */
    const backtests = (q: SummaryQuery) => {
      const g = group(q.dimension, "b")
      return sql`
        SELECT ${g.key} AS key, ${g.name} AS name,
          COALESCE(SUM(b.total_trades), 0)::integer AS total_trades,
          COALESCE(SUM(b.winning_trades), 0)::integer AS winning_trades,
          COUNT(DISTINCT b.symbol)::integer AS symbols_traded,
          COALESCE(SUM(b.total_pnl), 0)::text AS total_pnl
        FROM backtests b ${g.join}
        WHERE ${sql.and([sql`b.status = 'completed'`, ...filters(q, "b", "finished_at")])}
        GROUP BY ${g.by} ORDER BY ${g.by}`
    }

    /**
     * Filled orders of automation runs, summed per group: a trade is a fill that reduced a
     * position, won when its profit beat its fee; the PnL is every fill's profit less every fee.
     */
    const live = (q: SummaryQuery) => {
      const g = group(q.dimension, "o")
      return sql`
        SELECT ${g.key} AS key, ${g.name} AS name,
          COUNT(*) FILTER (WHERE o.closed_quantity > 0)::integer AS total_trades,
          COUNT(*) FILTER (WHERE o.closed_quantity > 0 AND o.realized_pnl - o.fee > 0)::integer AS winning_trades,
          COUNT(DISTINCT o.symbol)::integer AS symbols_traded,
          COALESCE(SUM(o.realized_pnl - o.fee), 0)::text AS total_pnl
        FROM automation_orders o ${g.join}
        WHERE ${sql.and([sql`o.status = 'filled'`, ...filters(q, "o", "filled_at")])}
        GROUP BY ${g.by} ORDER BY ${g.by}`
    }

    const summary = SqlSchema.findAll({
      Request: SummaryQuery,
      Result: SummaryRow,
      execute: (q) => (q.source === "backtest" ? backtests(q) : live(q))
    })

    return { summary } as const
  })
}) {}
