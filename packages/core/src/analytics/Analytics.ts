import { Effect } from "effect"
import { AccountId } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { InvalidInput } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { ProgramId } from "../programs/Program.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { AnalyticsRepo } from "./AnalyticsRepo.js"
import {
  AccountPerformanceItem,
  ProgramPerformance,
  ProgramPerformanceItem,
  type ProgramPerformanceParams,
  summaryDefaults,
  SymbolPerformanceItem
} from "./ProgramPerformance.js"

const date = (iso: string | undefined) => iso === undefined ? undefined : new Date(iso)

/** Aggregates over the caller's own data: live trades of automation runs, or completed backtests. */
export class Analytics extends Effect.Service<Analytics>()("@trading-platform/core/Analytics", {
  effect: Effect.gen(function*() {
    const repo = yield* AnalyticsRepo
    const accounts = yield* Accounts

    const programSummary = (caller: CurrentUserShape, request: ProgramPerformanceParams) =>
      Effect.gen(function*() {
        const params = { ...summaryDefaults, ...request }
        const from = date(params.from)
        const to = date(params.to)
        if (from !== undefined && to !== undefined && !(from < to)) {
          return yield* new InvalidInput({
            error: "to must be after from",
            issues: [{ path: "to", message: "must be after from" }]
          })
        }
        // A filter naming another user's account is refused like any other use of it.
        if (params.account_id !== undefined) yield* accounts.owned(caller, params.account_id)
        const rows = yield* repo.summary({
          user_id: caller.id,
          source: params.source,
          dimension: params.dimension,
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
          ...(params.account_id === undefined ? {} : { account_id: params.account_id })
        })
        return new ProgramPerformance({
          dimension: params.dimension,
          filters: {
            source: params.source,
            from: from?.toISOString() ?? null,
            to: to?.toISOString() ?? null,
            account_id: params.account_id ?? null
          },
          items: rows.map((row) => {
            const totals = {
              total_trades: row.total_trades,
              symbols_traded: row.symbols_traded,
              total_pnl: row.total_pnl,
              win_rate: row.total_trades === 0 ? 0 : row.winning_trades / row.total_trades
            }
            switch (params.dimension) {
              case "program":
                return new ProgramPerformanceItem({
                  program_id: ProgramId.make(Number(row.key)),
                  program_name: row.name ?? "",
                  ...totals
                })
              case "symbol":
                return new SymbolPerformanceItem({ symbol: row.key, ...totals })
              case "account":
                return new AccountPerformanceItem({
                  account_id: AccountId.make(Number(row.key)),
                  account_name: row.name ?? "",
                  ...totals
                })
            }
          })
        })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Analytics.programSummary", { attributes: { userId: caller.id } })
      )

    return { programSummary } as const
  }),
  dependencies: [AnalyticsRepo.Default]
}) {}
