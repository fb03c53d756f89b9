import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { ProgramId } from "../programs/Program.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Timeframe } from "../venues/Venue.js"
import { BindingId } from "./Automation.js"

const Json = <S extends Schema.Schema.Any>(schema: S) => Schema.parseJson(schema)

export const BindingRow = Schema.Struct({
  id: BindingId,
  user_id: UserId,
  program_id: ProgramId,
  account_id: AccountId,
  symbols: Json(Schema.Array(Schema.String)),
  timeframe: Timeframe,
  timeframes: Json(Schema.Array(Timeframe)),
  interval_minutes: Schema.NullOr(Schema.Int),
  signal_pool_ids: Json(Schema.Array(Schema.Int)),
  params: Json(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  leverage: Schema.NullOr(Schema.Int),
  enabled: Schema.Boolean,
  portfolio: Schema.Boolean,
  next_run_at: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type BindingRow = typeof BindingRow.Type

/** The columns a user sets; every write sets all of them. */
export const BindingEdit = Schema.Struct({
  account_id: AccountId,
  symbols: Json(Schema.Array(Schema.String)),
  timeframe: Timeframe,
  timeframes: Json(Schema.Array(Timeframe)),
  interval_minutes: Schema.NullOr(Schema.Int),
  signal_pool_ids: Json(Schema.Array(Schema.Int)),
  params: Json(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  leverage: Schema.NullOr(Schema.Int),
  enabled: Schema.Boolean,
  portfolio: Schema.Boolean,
  next_run_at: Schema.NullOr(Schema.DateFromSelf)
})
export type BindingEdit = typeof BindingEdit.Type

/** SQL for bindings; no rules here. */
export class BindingsRepo extends Effect.Service<BindingsRepo>()("@trading-platform/core/BindingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: Schema.Struct({ edit: BindingEdit, user_id: UserId, program_id: ProgramId, now: Schema.DateFromSelf }),
      Result: BindingRow,
      execute: ({ edit, now, program_id, user_id }) =>
        sql`
        INSERT INTO automation_bindings ${
          sql.insert({ ...edit, user_id, program_id, created_at: now, updated_at: now })
        }
        RETURNING *`
    })
    const findById = SqlSchema.findOne({
      Request: BindingId,
      Result: BindingRow,
      execute: (id) => sql`SELECT * FROM automation_bindings WHERE id = ${id}`
    })
    const listByProgram = SqlSchema.findAll({
      Request: Schema.Struct({ program_id: ProgramId, limit: Schema.Int, offset: Schema.Int }),
      Result: BindingRow,
      execute: (q) =>
        sql`
        SELECT * FROM automation_bindings WHERE program_id = ${q.program_id}
        ORDER BY id LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    const update = SqlSchema.single({
      Request: Schema.Struct({ id: BindingId, edit: BindingEdit, now: Schema.DateFromSelf }),
      Result: BindingRow,
      execute: ({ edit, id, now }) =>
        sql`
        UPDATE automation_bindings SET ${sql.update({ ...edit, updated_at: now })} WHERE id = ${id} RETURNING *`
    })
    const remove = (id: BindingId) => sql`DELETE FROM automation_bindings WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Enabled bindings whose schedule is due at `now`. */
    const due = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: BindingRow,
      execute: (now) =>
        sql`
        SELECT * FROM automation_bindings WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= ${now}
        ORDER BY next_run_at LIMIT 100`
    })
    /** The earliest slot of any enabled binding, if one has a schedule. */
    const nextSlot = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ at: Schema.DateFromSelf }),
      execute: () =>
        sql`SELECT min(next_run_at) AS at FROM automation_bindings WHERE enabled HAVING min(next_run_at) IS NOT NULL`
    })
    /** Moves a schedule on from the slot it was read at; false when someone else already did. */
    const advance = (id: BindingId, from: Date, to: Date) =>
      Effect.map(
        sql`UPDATE automation_bindings SET next_run_at = ${to} WHERE id = ${id} AND next_run_at = ${from} RETURNING id`,
        (rows) => rows.length > 0
      )
    /** Enabled bindings that listen to a signal pool. */
    const listeningTo = SqlSchema.findAll({
      Request: Schema.Int,
      Result: BindingRow,
      execute: (poolId) =>
        sql`
        SELECT * FROM automation_bindings
        WHERE enabled AND signal_pool_ids::jsonb @> jsonb_build_array(${poolId}::integer) ORDER BY id`
    })

    return { insert, findById, listByProgram, update, remove, due, nextSlot, advance, listeningTo } as const
  })
}) {}
