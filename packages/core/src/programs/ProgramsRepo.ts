import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { ProgramParameter } from "./Parameters.js"
import { ProgramId } from "./Program.js"

/** The declared parameters, as JSON text; null without a declaration. */
const Parameters = Schema.NullOr(Schema.parseJson(Schema.Array(ProgramParameter)))

export const ProgramRow = Schema.Struct({
  id: ProgramId,
  user_id: UserId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  language: Schema.String,
  code: Schema.String,
  parameters: Parameters,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type ProgramRow = typeof ProgramRow.Type

/** A program as lists read it: not its code (up to 200,000 characters) or its parameters. */
export const ProgramEntryRow = ProgramRow.pick("id", "name", "description", "language", "created_at", "updated_at")
export type ProgramEntryRow = typeof ProgramEntryRow.Type

const ProgramWrite = Schema.Struct({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  language: Schema.String,
  code: Schema.String,
  parameters: Parameters,
  now: Schema.DateFromSelf
})

/** SQL for programs; no rules here. */
export class ProgramsRepo extends Effect.Service<ProgramsRepo>()("@trading-platform/core/ProgramsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: Schema.Struct({ ...ProgramWrite.fields, user_id: UserId }),
      Result: ProgramRow,
      execute: (p) =>
        sql`
        INSERT INTO programs (user_id, name, description, language, code, parameters, created_at, updated_at)
        VALUES (${p.user_id}, ${p.name}, ${p.description}, ${p.language}, ${p.code}, ${p.parameters}, ${p.now}, ${p.now})
        RETURNING *`
    })
    const findById = SqlSchema.findOne({
      Request: ProgramId,
      Result: ProgramRow,
      execute: (id) => sql`SELECT * FROM programs WHERE id = ${id}`
    })
    // Whose it is, for a request that only checks that: the row holds the code.
    const owner = SqlSchema.findOne({
      Request: ProgramId,
      Result: Schema.Struct({ user_id: UserId }),
      execute: (id) => sql`SELECT user_id FROM programs WHERE id = ${id}`
    })
    const listByUser = SqlSchema.findAll({
      Request: Schema.Struct({ user_id: UserId, limit: Schema.Int, offset: Schema.Int }),
      Result: ProgramEntryRow,
      execute: (q) =>
        sql`
        SELECT ${columnsOf(sql, ProgramEntryRow)} FROM programs WHERE user_id = ${q.user_id}
        ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    const update = SqlSchema.single({
      Request: Schema.Struct({ ...ProgramWrite.fields, id: ProgramId }),
      // The summary it answers, not the code just written.
      Result: ProgramEntryRow,
      execute: (p) =>
        sql`
        UPDATE programs SET name = ${p.name}, description = ${p.description}, language = ${p.language},
          code = ${p.code}, parameters = ${p.parameters}, updated_at = ${p.now}
        WHERE id = ${p.id}
        RETURNING ${columnsOf(sql, ProgramEntryRow)}`
    })
    const remove = (id: ProgramId) => sql`DELETE FROM programs WHERE id = ${id}`.pipe(Effect.asVoid)

    return { insert, findById, owner, listByUser, update, remove } as const
  })
}) {}
