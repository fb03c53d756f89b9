import { Schema } from "effect"
import { Account } from "../accounts/Account.js"
import { Amount, PositiveAmount } from "../http/Amount.js"

/** An ISO-8601 timestamp in, the same instant as a UTC ISO string out. */
const Instant = Schema.String.pipe(
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "must be an ISO-8601 timestamp" }),
  Schema.transform(Schema.String, { strict: true, decode: (s) => new Date(s).toISOString(), encode: (s) => s })
).annotations({ jsonSchema: { type: "string", format: "date-time" }, examples: ["2025-01-01T00:00:00Z"] })
const Symbol = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20))
const maxRows = 10_000

export const DecisionLog = Schema.Struct({
  decision_time: Instant,
  symbol: Symbol,
  operation: Schema.Literal("buy", "sell", "hold", "close"),
  target_portion_of_balance: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1)))),
  leverage: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 125)))),
  reason: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(4000))))
})
export type DecisionLog = typeof DecisionLog.Type

export const TradeRecord = Schema.Struct({
  trade_time: Instant,
  symbol: Symbol,
  side: Schema.Literal("buy", "sell"),
  quantity: PositiveAmount,
  price: PositiveAmount,
  fee: Schema.optional(Schema.NullOr(Amount)),
  realized_pnl: Schema.optional(Schema.NullOr(Amount))
})
export type TradeRecord = typeof TradeRecord.Type

/** An account's history as `GET /api/trader/{id}/export` writes it and import reads it. */
export const TraderDocument = Schema.Struct({
  version: Schema.Literal("1.0"),
  exported_at: Schema.optional(Schema.String),
  /** The source account, for information; the target is the path's account. */
  account: Schema.optional(Schema.Unknown),
  decision_logs: Schema.Array(DecisionLog).pipe(Schema.maxItems(maxRows)),
  trades: Schema.Array(TradeRecord).pipe(Schema.maxItems(maxRows))
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{
    version: "1.0",
    decision_logs: [{
      decision_time: "2025-01-01T00:00:00Z",
      symbol: "BTC",
      operation: "buy",
      target_portion_of_balance: 0.5,
      reason: "breakout"
    }],
    trades: [{ trade_time: "2025-01-01T00:05:00Z", symbol: "BTC", side: "buy", quantity: 0.1, price: 94000, fee: 3.29 }]
  }]
})
export type TraderDocument = typeof TraderDocument.Type

export class TraderExport extends Schema.Class<TraderExport>("TraderExport")({
  version: Schema.Literal("1.0"),
  exported_at: Schema.String,
  account: Account,
  decision_logs: Schema.Array(DecisionLog),
  trades: Schema.Array(TradeRecord)
}) {}

const Counts = Schema.Struct({ decision_logs: Schema.Int, trades: Schema.Int })
const Skipped = Schema.Struct({
  count: Schema.Int,
  /** Why each skipped row was skipped, e.g. `trade 2026-01-01T00:00:00.000Z BTC buy: already recorded`. */
  details: Schema.Array(Schema.String)
})
const TargetAccount = Schema.Struct({ id: Schema.Int, name: Schema.String })

export class ImportPreview extends Schema.Class<ImportPreview>("ImportPreview")({
  will_import: Counts,
  will_skip: Skipped,
  warnings: Schema.Array(Schema.String),
  target_account: TargetAccount
}) {}

export class ImportResult extends Schema.Class<ImportResult>("ImportResult")({
  imported: Counts,
  skipped: Skipped,
  warnings: Schema.Array(Schema.String),
  target_account: TargetAccount
}) {}
