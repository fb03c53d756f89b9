import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { makeJobQueue } from "../jobs/JobQueue.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { InsightId, InsightResult, InsightStatus } from "./Assistant.js"

export const InsightRow = Schema.Struct({
  id: InsightId,
  user_id: UserId,
  symbol: Schema.String,
  exchange: Exchange,
  timeframe: Timeframe,
  prompt: Schema.NullOr(Schema.String),
  status: InsightStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(InsightResult)),
  created_at: IsoTimestamp
})
export type InsightRow = typeof InsightRow.Type

/** Insight jobs as a kind of durable job. */
export const insightJobs = { table: "ai_insights", Row: InsightRow, Result: InsightResult } as const

/** SQL for insight jobs; no rules here. */
export class InsightsRepo extends Effect.Service<InsightsRepo>()("@trading-platform/core/InsightsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.single({
      Request: Schema.Struct({
        user_id: UserId,
        symbol: Schema.String,
        exchange: Exchange,
        timeframe: Timeframe,
        prompt: Schema.NullOr(Schema.String),
        now: Schema.DateFromSelf
      }),
      Result: InsightRow,
      execute: ({ now, ...i }) =>
        sql`INSERT INTO ai_insights ${sql.insert({ ...i, status: "queued", created_at: now })} RETURNING *`
    })
    const findById = SqlSchema.findOne({
      Request: InsightId,
      Result: InsightRow,
      execute: (id) => sql`SELECT * FROM ai_insights WHERE id = ${id}`
    })
    const jobs = yield* makeJobQueue(insightJobs)
    return { insert, findById, jobs } as const
  })
}) {}
