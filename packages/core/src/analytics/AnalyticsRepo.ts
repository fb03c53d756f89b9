import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { ProgramId } from "../programs/Program.js"
import { UserId } from "../users/User.js"

const SummaryQuery = Schema.Struct({
  user_id: UserId,
  from: Schema.optional(Schema.DateFromSelf),
  to: Schema.optional(Schema.DateFromSelf),
  account_id: Schema.optional(AccountId)
})

const SummaryRow = Schema.Struct({
  program_id: ProgramId,
  program_name: Schema.String,
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

    /** Each program's completed backtests, summed (backtests of deleted programs are left out). */
    const programSummary = SqlSchema.findAll({
      Request: SummaryQuery,
      Result: SummaryRow,
      execute: (q) =>
        sql`
          SELECT b.program_id, p.name AS program_name,
            COALESCE(SUM(b.total_trades), 0)::integer AS total_trades,
            COALESCE(SUM(b.winning_trades), 0)::integer AS winning_trades,
            COUNT(DISTINCT b.symbol)::integer AS symbols_traded,
            COALESCE(SUM(b.total_pnl), 0) AS total_pnl
          FROM backtests b JOIN programs p ON p.id = b.program_id
          WHERE ${
          sql.and([
            sql`b.user_id = ${q.user_id}`,
            sql`b.status = 'completed'`,
            ...(q.from === undefined ? [] : [sql`b.finished_at >= ${q.from}`]),
            ...(q.to === undefined ? [] : [sql`b.finished_at < ${q.to}`]),
            ...(q.account_id === undefined ? [] : [sql`b.account_id = ${q.account_id}`])
          ])
        }
          GROUP BY b.program_id, p.name
          ORDER BY b.program_id`
    })

    return { programSummary } as const
  })
}) {}
