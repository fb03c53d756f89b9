import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { IsoTimestamp } from "../sql/Columns.js"
import type { DecisionLog, TradeRecord } from "./TraderData.js"

const Numeric = Schema.NullOr(Schema.NumberFromString)

export const DecisionLogRow = Schema.Struct({
  decision_time: IsoTimestamp,
  symbol: Schema.String,
  operation: Schema.Literal("buy", "sell", "hold", "close"),
  target_portion_of_balance: Numeric,
  leverage: Schema.NullOr(Schema.Int),
  reason: Schema.NullOr(Schema.String)
})

export const TradeRow = Schema.Struct({
  trade_time: IsoTimestamp,
  symbol: Schema.String,
  side: Schema.Literal("buy", "sell"),
  quantity: Schema.NumberFromString,
  price: Schema.NumberFromString,
  fee: Numeric,
  realized_pnl: Numeric
})

/** SQL for an account's decision logs and trades; no rules here. */
export class TraderRepo extends Effect.Service<TraderRepo>()("@trading-platform/core/TraderRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const decisionLogs = SqlSchema.findAll({
      Request: AccountId,
      Result: DecisionLogRow,
      execute: (id) =>
        sql`
        SELECT decision_time, symbol, operation, target_portion_of_balance, leverage, reason
        FROM account_decision_logs WHERE account_id = ${id} ORDER BY decision_time, symbol`
    })
    const trades = SqlSchema.findAll({
      Request: AccountId,
      Result: TradeRow,
      execute: (id) =>
        sql`
        SELECT trade_time, symbol, side, quantity, price, fee, realized_pnl
        FROM account_trades WHERE account_id = ${id} ORDER BY trade_time, symbol, side`
    })

    // Rows that already exist (a concurrent import) are skipped by the unique keys.
    const insertNew = (
      table: "account_decision_logs" | "account_trades",
      rows: ReadonlyArray<Record<string, unknown>>
    ) =>
      rows.length === 0
        ? Effect.void
        : sql`INSERT INTO ${sql(table)} ${sql.insert(rows)} ON CONFLICT DO NOTHING`.pipe(Effect.asVoid)

    const insertDecisionLogs = (id: AccountId, logs: ReadonlyArray<DecisionLog>) =>
      insertNew(
        "account_decision_logs",
        logs.map((l) => ({
          account_id: id,
          decision_time: new Date(l.decision_time),
          symbol: l.symbol,
          operation: l.operation,
          target_portion_of_balance: l.target_portion_of_balance ?? null,
          leverage: l.leverage ?? null,
          reason: l.reason ?? null
        }))
      )
    const insertTrades = (id: AccountId, trades: ReadonlyArray<TradeRecord>) =>
      insertNew(
        "account_trades",
        trades.map((t) => ({
          account_id: id,
          trade_time: new Date(t.trade_time),
          symbol: t.symbol,
          side: t.side,
          quantity: t.quantity,
          price: t.price,
          fee: t.fee ?? null,
          realized_pnl: t.realized_pnl ?? null
        }))
      )

    return { decisionLogs, trades, insertDecisionLogs, insertTrades } as const
  })
}) {}
