import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { letOthersIn } from "../sql/LetOthersIn.js"
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

const insertBatch = 1_000

// The unique keys of the rows: import's duplicate rule and the export's page cursor.
const LogKey = DecisionLogRow.pick("decision_time", "symbol")
export type LogKey = typeof LogKey.Type
const TradeKey = TradeRow.pick("trade_time", "symbol", "side")
export type TradeKey = typeof TradeKey.Type

const Span = Schema.Struct({ account_id: AccountId, from: Schema.DateFromSelf, to: Schema.DateFromSelf })

/** SQL for an account's decision logs and trades; no rules here. */
export class TraderRepo extends Effect.Service<TraderRepo>()("@trading-platform/core/TraderRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One page of an account's decision logs in key order (time, symbol), after the row `after` when given. */
    const decisionLogPage = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, after: Schema.NullOr(LogKey), limit: Schema.Number }),
      Result: DecisionLogRow,
      execute: ({ account_id, after, limit }) =>
        sql`
        SELECT decision_time, symbol, operation, target_portion_of_balance, leverage, reason
        FROM account_decision_logs WHERE account_id = ${account_id}${
          after === null ? sql`` : sql` AND (decision_time, symbol) > (${after.decision_time}, ${after.symbol})`
        }
        ORDER BY decision_time, symbol LIMIT ${limit}`
    })
    /** One page of an account's trades in key order (time, symbol, side), after the row `after` when given. */
    const tradePage = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, after: Schema.NullOr(TradeKey), limit: Schema.Number }),
      Result: TradeRow,
      execute: ({ account_id, after, limit }) =>
        sql`
        SELECT trade_time, symbol, side, quantity, price, fee, realized_pnl
        FROM account_trades WHERE account_id = ${account_id}${
          after === null
            ? sql``
            : sql` AND (trade_time, symbol, side) > (${after.trade_time}, ${after.symbol}, ${after.side})`
        }
        ORDER BY trade_time, symbol, side LIMIT ${limit}`
    })

    /** The keys already recorded among those of a document (by its span of time), to tell them apart. */
    const recordedLogKeys = SqlSchema.findAll({
      Request: Span,
      Result: LogKey,
      execute: (r) =>
        sql`
        SELECT decision_time, symbol FROM account_decision_logs
        WHERE account_id = ${r.account_id} AND decision_time BETWEEN ${r.from} AND ${r.to}`
    })
    const recordedTradeKeys = SqlSchema.findAll({
      Request: Span,
      Result: TradeKey,
      execute: (r) =>
        sql`
        SELECT trade_time, symbol, side FROM account_trades
        WHERE account_id = ${r.account_id} AND trade_time BETWEEN ${r.from} AND ${r.to}`
    })

    // Rows that already exist (an earlier or concurrent import) are skipped by the unique keys.
    // Each batch of `insertBatch` rows commits on its own, and other requests get their turn in
    // between; an import cut short is finished by sending it again. (One statement also takes at
    // most 65,535 parameters in PostgreSQL.)
    const insertNew = (
      table: "account_decision_logs" | "account_trades",
      rows: ReadonlyArray<Record<string, unknown>>
    ) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(rows.length / insertBatch) }, (_, i) =>
          rows.slice(i * insertBatch, (i + 1) * insertBatch)),
        (batch) =>
          Effect.zipRight(letOthersIn, sql`INSERT INTO ${sql(table)} ${sql.insert(batch)} ON CONFLICT DO NOTHING`),
        { discard: true }
      )

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

    return {
      decisionLogPage,
      tradePage,
      recordedLogKeys,
      recordedTradeKeys,
      insertDecisionLogs,
      insertTrades
    } as const
  })
}) {}
