import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { makeJobQueue } from "../jobs/JobQueue.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { CandleSyncId, CandleSyncResult } from "./CandleSync.js"

/** `bigint` epoch ms: a string from node-postgres, a number from PGlite. */
const EpochMs = Schema.Union(Schema.Number, Schema.NumberFromString)

export const CandleSyncRow = Schema.Struct({
  id: CandleSyncId,
  user_id: UserId,
  exchange: Exchange,
  symbol: Schema.String,
  timeframe: Timeframe,
  from_time: EpochMs,
  to_time: EpochMs,
  status: JobStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(CandleSyncResult)),
  created_at: IsoTimestamp
})
export type CandleSyncRow = typeof CandleSyncRow.Type

/** Candle syncs as a kind of durable job. */
export const candleSyncJobs = { table: "candle_syncs", Row: CandleSyncRow, Result: CandleSyncResult } as const

/** SQL for candle sync jobs; no rules here. */
export class CandleSyncsRepo extends Effect.Service<CandleSyncsRepo>()("@trading-platform/core/CandleSyncsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.single({
      Request: Schema.Struct({
        user_id: UserId,
        exchange: Exchange,
        symbol: Schema.String,
        timeframe: Timeframe,
        from_time: Schema.Number,
        to_time: Schema.Number,
        now: Schema.DateFromSelf
      }),
      Result: CandleSyncRow,
      execute: ({ now, ...s }) =>
        sql`INSERT INTO candle_syncs ${sql.insert({ ...s, status: "queued", created_at: now })} RETURNING *`
    })
    const findById = SqlSchema.findOne({
      Request: CandleSyncId,
      Result: CandleSyncRow,
      execute: (id) => sql`SELECT * FROM candle_syncs WHERE id = ${id}`
    })
    return { insert, findById, jobs: yield* makeJobQueue(candleSyncJobs) } as const
  })
}) {}
