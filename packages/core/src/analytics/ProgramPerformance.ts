import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { Instant } from "../backtests/Backtest.js"
import { ProgramId } from "../programs/Program.js"
import { idParam } from "../http/IdParam.js"


/** What the summary groups by; programs are the one dimension so far. */
export const SummaryDimension = Schema.Literal("program")

/** `GET /api/analytics/program-summary` query: completed backtests finished in `[from, to)`, optionally of one account. */
export const ProgramPerformanceParams = Schema.Struct({
  dimension: Schema.optionalWith(SummaryDimension, { default: () => "program" as const }),
  from: Schema.optional(Instant),
  to: Schema.optional(Instant),
  account_id: Schema.optional(idParam(AccountId))
})
export type ProgramPerformanceParams = typeof ProgramPerformanceParams.Type

/** One row of the program summary: one program's completed backtests, summed; `win_rate` a fraction 0..1. */
export class ProgramPerformanceItem extends Schema.Class<ProgramPerformanceItem>("ProgramPerformanceItem")({
  program_id: ProgramId,
  total_trades: Schema.Int,
  program_name: Schema.String,
  symbols_traded: Schema.Int,
  total_pnl: Schema.Number,
  win_rate: Schema.Number
}) {}

/** The program summary; `filters` echoes the filters applied (null when absent). */
export class ProgramPerformance extends Schema.Class<ProgramPerformance>("ProgramPerformance")({
  dimension: SummaryDimension,
  filters: Schema.Struct({
    from: Schema.NullOr(Schema.String),
    to: Schema.NullOr(Schema.String),
    account_id: Schema.NullOr(AccountId)
  }),
  items: Schema.Array(ProgramPerformanceItem)
}) {}
