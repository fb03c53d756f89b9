import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { Accounts, toAccount } from "../accounts/Accounts.js"
import type { AccountRow } from "../accounts/Accounts.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import {
  type DecisionLog,
  ImportPreview,
  ImportResult,
  type TraderDocument,
  type TradeRecord,
  TraderExport
} from "./TraderData.js"
import { TraderRepo } from "./TraderRepo.js"

const logKey = (l: DecisionLog) => `decision log ${l.decision_time} ${l.symbol}`
const tradeKey = (t: TradeRecord) => `trade ${t.trade_time} ${t.symbol} ${t.side}`

/** Splits rows into new ones and skipped ones (already recorded, or repeated in the document). */
const partition = <A>(rows: ReadonlyArray<A>, existing: ReadonlyArray<A>, key: (a: A) => string) => {
  const recorded = new Set(existing.map(key))
  const seen = new Set<string>()
  const fresh: Array<A> = []
  const skipped: Array<string> = []
  for (const row of rows) {
    const k = key(row)
    if (recorded.has(k)) skipped.push(`${k}: already recorded`)
    else if (seen.has(k)) skipped.push(`${k}: repeated in the document`)
    else {
      seen.add(k)
      fresh.push(row)
    }
  }
  return { fresh, skipped }
}

/** Trader history: export an account's decision logs and trades, and import them, skipping duplicates. */
export class Trader extends Effect.Service<Trader>()("@trading-platform/core/Trader", {
  effect: Effect.gen(function*() {
    const accounts = yield* Accounts
    const repo = yield* TraderRepo
    const sql = yield* SqlClient.SqlClient

    const plan = (account: AccountRow, document: TraderDocument) =>
      Effect.gen(function*() {
        const logs = partition(document.decision_logs, yield* repo.decisionLogs(account.id), logKey)
        const trades = partition(document.trades, yield* repo.trades(account.id), tradeKey)
        const source = document.account as { id?: unknown; name?: unknown } | undefined
        const warnings = [
          ...(source?.id !== undefined && source.id !== account.id
            ? [`The document was exported from account ${String(source.id)}; it goes into account ${account.id}`]
            : []),
          ...(document.decision_logs.length + document.trades.length === 0 ? ["The document holds no history"] : [])
        ]
        const skipped = {
          count: logs.skipped.length + trades.skipped.length,
          details: [...logs.skipped, ...trades.skipped]
        }
        return {
          logs: logs.fresh,
          trades: trades.fresh,
          skipped,
          warnings,
          target: { id: account.id, name: account.name }
        }
      })

    const exportHistory = (caller: CurrentUserShape, id: AccountId) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        return new TraderExport({
          version: "1.0",
          exported_at: new Date(yield* Clock.currentTimeMillis).toISOString(),
          account: toAccount(account),
          decision_logs: yield* repo.decisionLogs(id),
          trades: yield* repo.trades(id)
        })
      }).pipe(dieOnStorageFailure, Effect.withSpan("Trader.export", { attributes: { id } }))

    const preview = (caller: CurrentUserShape, id: AccountId, document: TraderDocument) =>
      Effect.flatMap(accounts.owned(caller, id), (account) => plan(account, document)).pipe(
        Effect.map((p) =>
          new ImportPreview({
            will_import: { decision_logs: p.logs.length, trades: p.trades.length },
            will_skip: p.skipped,
            warnings: p.warnings,
            target_account: p.target
          })
        ),
        dieOnStorageFailure,
        Effect.withSpan("Trader.preview", { attributes: { id } })
      )

    const importHistory = (caller: CurrentUserShape, id: AccountId, document: TraderDocument) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        const p = yield* plan(account, document)
        yield* sql.withTransaction(
          Effect.zipRight(repo.insertDecisionLogs(id, p.logs), repo.insertTrades(id, p.trades))
        )
        return new ImportResult({
          imported: { decision_logs: p.logs.length, trades: p.trades.length },
          skipped: p.skipped,
          warnings: p.warnings,
          target_account: p.target
        })
      }).pipe(dieOnStorageFailure, Effect.withSpan("Trader.import", { attributes: { id } }))

    return { exportHistory, preview, importHistory } as const
  }),
  dependencies: [TraderRepo.Default]
}) {}
