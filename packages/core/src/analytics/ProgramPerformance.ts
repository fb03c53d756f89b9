import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { defaultedParam } from "../http/Defaults.js"
import { idParam } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { ProgramId } from "../programs/Program.js"

/** What the summary groups by. */
export const SummaryDimension = Schema.Literal("program", "symbol", "account")

/** What it sums: live trades of automation runs (the default), or completed backtests. */
export const SummarySource = Schema.Literal("live", "backtest")

/** What the summary query leaves out. */
export const summaryDefaults = { dimension: "program", source: "live" } as const

/** `GET /api/analytics/program-summary` query: trades (or backtests) in `[from, to)`, optionally of one account. */
export const ProgramPerformanceParams = Schema.Struct({
  dimension: defaultedParam(SummaryDimension, summaryDefaults.dimension),
  source: defaultedParam(SummarySource, summaryDefaults.source),
  from: Schema.optional(Instant),
  to: Schema.optional(Instant),
  account_id: Schema.optional(idParam(AccountId))
})
export type ProgramPerformanceParams = typeof ProgramPerformanceParams.Type

const totals = {
  total_trades: Schema.Int,
  symbols_traded: Schema.Int,
  total_pnl: Schema.Number,
  win_rate: Schema.Number
}

/** One row of the program summary: one program's trades, summed; `win_rate` a fraction 0..1. */
export class ProgramPerformanceItem extends Schema.Class<ProgramPerformanceItem>("ProgramPerformanceItem")({
  program_id: ProgramId,
  program_name: Schema.String,
  ...totals
}) {}

/** One symbol's trades across the caller's programs (`dimension=symbol`). */
export class SymbolPerformanceItem extends Schema.Class<SymbolPerformanceItem>("SymbolPerformanceItem")({
  symbol: Schema.String,
  ...totals
}) {}

/** One account's trades (`dimension=account`). */
export class AccountPerformanceItem extends Schema.Class<AccountPerformanceItem>("AccountPerformanceItem")({
  account_id: AccountId,
  account_name: Schema.String,
  ...totals
}) {}

/** The program summary; `filters` echoes the filters applied (null when absent). */
export class ProgramPerformance extends Schema.Class<ProgramPerformance>("ProgramPerformance")({
  dimension: SummaryDimension,
  filters: Schema.Struct({
    source: SummarySource,
    from: Schema.NullOr(Schema.String),
    to: Schema.NullOr(Schema.String),
    account_id: Schema.NullOr(AccountId)
  }),
  items: Schema.Array(Schema.Union(ProgramPerformanceItem, SymbolPerformanceItem, AccountPerformanceItem))
}) {}
