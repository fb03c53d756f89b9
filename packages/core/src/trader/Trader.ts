import { Clock, Effect, Option, Schema, Stream } from "effect"
import { Account, type AccountId } from "../accounts/Account.js"
import { Accounts, toAccount } from "../accounts/Accounts.js"
import type { AccountRow } from "../accounts/Accounts.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { letOthersIn } from "../sql/LetOthersIn.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { DecisionLog, ImportPreview, ImportResult, type TraderDocument, TradeRecord } from "./TraderData.js"
import { type LogKey, type TradeKey, TraderRepo } from "./TraderRepo.js"

/** Rows an export reads and writes at a time: its memory and its hold on the event loop stay small. */
const exportPage = 1_000

/** The span of time a document's rows cover, to read only the recorded keys they could repeat. */
const spanOf = (times: ReadonlyArray<string>) => {
  const millis = times.map(Date.parse)
  return { from: new Date(Math.min(...millis)), to: new Date(Math.max(...millis)) }
}

/**
 * A JSON array of every row of the pages `page` reads, written page by page: each page after the
 * one ending at the cursor it returns, as text, until a short page.
 */
const jsonArray = <Row, Cursor, E, R>(
  page: (after: Cursor | null) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  cursorOf: (row: Row) => Cursor,
  encode: (row: Row) => unknown
) =>
  Stream.paginateEffect(
    { after: null as Cursor | null, first: true },
    ({ after, first }) =>
      Effect.map(Effect.zipRight(letOthersIn, page(after)), (rows) => {
        const text = rows.map((row) => JSON.stringify(encode(row))).join(",")
        const next = rows.length < exportPage
          ? Option.none()
          : Option.some({ after: cursorOf(rows[rows.length - 1]!), first: false })
        return [first || text === "" ? text : `,${text}`, next] as const
      })
  ).pipe(Stream.filter((text) => text !== ""))

const encodeLog = Schema.encodeSync(DecisionLog)
const encodeTrade = Schema.encodeSync(TradeRecord)
const encodeAccount = Schema.encodeSync(Account)

const logKey = (l: LogKey) => `decision log ${l.decision_time} ${l.symbol}`
const tradeKey = (t: TradeKey) => `trade ${t.trade_time} ${t.symbol} ${t.side}`

/** Splits rows into new ones and skipped ones (already recorded, or repeated in the document). */
const partition = <A extends K, K>(rows: ReadonlyArray<A>, existing: ReadonlyArray<K>, key: (k: K) => string) => {
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

    const plan = (account: AccountRow, document: TraderDocument) =>
      Effect.gen(function*() {
        const { decision_logs, trades: documentTrades } = document
        const recordedLogs = decision_logs.length === 0 ? [] : yield* repo.recordedLogKeys({
          account_id: account.id,
          ...spanOf(decision_logs.map((l) => l.decision_time))
        })
        const recordedTrades = documentTrades.length === 0 ? [] : yield* repo.recordedTradeKeys({
          account_id: account.id,
          ...spanOf(documentTrades.map((t) => t.trade_time))
        })
        const logs = partition(decision_logs, recordedLogs, logKey)
        const trades = partition(documentTrades, recordedTrades, tradeKey)
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

    /**
     * The export document (`TraderExport`) as JSON text, read and written a page of rows at a time,
     * so a large history neither sits in memory nor holds the event loop. Ownership is checked
     * before anything is written.
     */
    const exportHistory = (caller: CurrentUserShape, id: AccountId) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        const head = JSON.stringify({
          version: "1.0",
          exported_at: new Date(yield* Clock.currentTimeMillis).toISOString(),
          account: encodeAccount(toAccount(account))
        })
        const logs = jsonArray(
          (after: LogKey | null) => repo.decisionLogPage({ account_id: id, after, limit: exportPage }),
          (l) => ({ decision_time: l.decision_time, symbol: l.symbol }),
          encodeLog
        )
        const trades = jsonArray(
          (after: TradeKey | null) => repo.tradePage({ account_id: id, after, limit: exportPage }),
          (t) => ({ trade_time: t.trade_time, symbol: t.symbol, side: t.side }),
          encodeTrade
        )
        return Stream.make(`${head.slice(0, -1)},"decision_logs":[`).pipe(
          Stream.concat(logs),
          Stream.concat(Stream.make(`],"trades":[`)),
          Stream.concat(trades),
          Stream.concat(Stream.make("]}")),
          Stream.orDie
        )
      }).pipe(dieOnStorageFailure, withRequestSpan("Trader.export", { attributes: { id } }))

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
        withRequestSpan("Trader.preview", { attributes: { id } })
      )

    const importHistory = (caller: CurrentUserShape, id: AccountId, document: TraderDocument) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        const p = yield* plan(account, document)
        yield* repo.insertDecisionLogs(id, p.logs)
        yield* repo.insertTrades(id, p.trades)
        return new ImportResult({
          imported: { decision_logs: p.logs.length, trades: p.trades.length },
          skipped: p.skipped,
          warnings: p.warnings,
          target_account: p.target
        })
      }).pipe(dieOnStorageFailure, withRequestSpan("Trader.import", { attributes: { id } }))

    return { exportHistory, preview, importHistory } as const
  }),
  dependencies: [TraderRepo.Default]
}) {}
