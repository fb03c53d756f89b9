import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { IsoTimestamp } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { UserId } from "../users/User.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { DatasetId, DatasetName } from "./Dataset.js"

export const DatasetRow = Schema.Struct({
  id: DatasetId,
  user_id: UserId,
  name: DatasetName,
  venue: Exchange,
  symbol: Schema.String,
  timeframe: Timeframe,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type DatasetRow = typeof DatasetRow.Type

/** SQL of the users' imported datasets (their bars are in the candle store); no rules here. */
export class DatasetsRepo extends Effect.Service<DatasetsRepo>()("@trading-platform/core/DatasetsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: DatasetId,
      Result: DatasetRow,
      execute: (id) => sql`SELECT * FROM market_datasets WHERE id = ${id}`
    })
    const findByName = SqlSchema.findOne({
      Request: Schema.Struct({ user_id: UserId, name: Schema.String }),
      Result: DatasetRow,
      execute: (q) => sql`SELECT * FROM market_datasets WHERE user_id = ${q.user_id} AND name = ${q.name}`
    })
    const list = SqlSchema.findAll({
      Request: UserId,
      Result: DatasetRow,
      execute: (userId) => sql`SELECT * FROM market_datasets WHERE user_id = ${userId} ORDER BY name`
    })

    /** The user's dataset of that name, created when it does not exist (a concurrent creator's row is kept). */
    const upsert = (row: Omit<DatasetRow, "id" | "created_at" | "updated_at">, now: Date) =>
      Effect.zipRight(
        sql`
          INSERT INTO market_datasets ${sql.insert({ ...row, created_at: now, updated_at: now })}
          ON CONFLICT (user_id, name) DO UPDATE SET updated_at = excluded.updated_at`,
        Effect.flatMap(findByName({ user_id: row.user_id, name: row.name }), (found) => found)
      )

    const remove = (id: DatasetId) => sql`DELETE FROM market_datasets WHERE id = ${id}`.pipe(Effect.asVoid)

    return {
      findById: (id: DatasetId) => dieOnStorageFailure(findById(id)),
      findByName: (userId: UserId, name: string) => dieOnStorageFailure(findByName({ user_id: userId, name })),
      list: (userId: UserId) => dieOnStorageFailure(list(userId)),
      upsert: (row: Omit<DatasetRow, "id" | "created_at" | "updated_at">, now: Date) =>
        dieOnStorageFailure(upsert(row, now)),
      remove: (id: DatasetId) => dieOnStorageFailure(remove(id))
    } as const
  })
}) {}
