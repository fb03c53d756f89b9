import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId, MarginMode } from "../accounts/Account.js"
import { makeJobQueue } from "../jobs/JobQueue.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Timeframe } from "../venues/Venue.js"
import { AiBacktestId, AiBacktestMode, AiBacktestOutcome } from "./AiBacktest.js"

/** What a submission fixes: the run's settings, with the account's prompts as they were then. */
const settings = {
  user_id: UserId,
  account_id: AccountId,
  mode: AiBacktestMode,
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  timeframe: Timeframe,
  interval_minutes: Schema.Int,
  initial_balance: Schema.NumberFromString,
  fee_rate: Schema.Number,
  slippage: Schema.Number,
  margin_mode: MarginMode,
  leverage: Schema.Number,
  max_model_calls: Schema.Int,
  system_prompt: Schema.NullOr(Schema.String),
  user_template: Schema.NullOr(Schema.String)
}

export const AiBacktestRow = Schema.Struct({
  id: AiBacktestId,
  ...settings,
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  status: JobStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(AiBacktestOutcome)),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type AiBacktestRow = typeof AiBacktestRow.Type

/** An AI backtest without its result, as its account's list reads it. */
export const AiBacktestEntryRow = AiBacktestRow.omit("result")
export type AiBacktestEntryRow = typeof AiBacktestEntryRow.Type

const NewAiBacktest = Schema.Struct({
  ...settings,
  initial_balance: Schema.Number,
  start_at: Schema.DateFromSelf,
  end_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf
})
export type NewAiBacktest = typeof NewAiBacktest.Type

/** The kind of job of AI backtests (its table; in wake-ups, logs and spans). */
export const aiBacktestJobKind = "ai_backtests"

/** SQL for AI backtests; `jobs` claims, renews and ends them. */
export class AiBacktestsRepo extends Effect.Service<AiBacktestsRepo>()("@trading-platform/core/AiBacktestsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: NewAiBacktest,
      Result: AiBacktestRow,
      execute: (row) => sql`INSERT INTO ai_backtests ${sql.insert({ ...row, status: "queued" })} RETURNING *`
    })

    /** The account's backtest of that id. */
    const find = SqlSchema.findOne({
      Request: Schema.Struct({ account_id: AccountId, id: AiBacktestId }),
      Result: AiBacktestRow,
      execute: ({ account_id, id }) => sql`SELECT * FROM ai_backtests WHERE id = ${id} AND account_id = ${account_id}`
    })

    // Without the result: it holds every slot, and a list has fifty backtests.
    const list = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: AiBacktestEntryRow,
      execute: (q) =>
        sql`
        SELECT ${columnsOf(sql, AiBacktestEntryRow)} FROM ai_backtests WHERE account_id = ${q.account_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    const jobs = yield* makeJobQueue({ table: aiBacktestJobKind, Row: AiBacktestRow, Result: AiBacktestOutcome })

    /** Deletes the AI backtests that finished before `before`; queued and running ones stay. */
    const purgeFinished = (before: Date) =>
      sql`DELETE FROM ai_backtests WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < ${before}`
        .pipe(
          Effect.asVoid
        )

    return { insert, find, list, purgeFinished, jobs } as const
  })
}) {}
