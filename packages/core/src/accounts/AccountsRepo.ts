import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema, Struct } from "effect"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { AccountId, AccountSettings, AccountType } from "./Account.js"

/** The columns a user may change; every write sets all of them. */
const EditableFields = {
  ...AccountSettings,
  /** `api_key` sealed by `Secrets`. */
  api_key_sealed: Schema.NullOr(Schema.String)
}
export const AccountEdit = Schema.Struct(EditableFields)
export type AccountEdit = typeof AccountEdit.Type

const editableKeys = Object.keys(EditableFields) as Array<keyof AccountEdit>

export const AccountRow = Schema.Struct({
  ...EditableFields,
  id: AccountId,
  user_id: UserId,
  account_type: AccountType,
  initial_capital: Schema.NumberFromString,
  current_cash: Schema.NumberFromString,
  frozen_cash: Schema.NumberFromString,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  has_venue1_wallet: Schema.Boolean,
  has_venue2_keys: Schema.Boolean
})
export type AccountRow = typeof AccountRow.Type

/** The editable columns of a row, to change some and write them back. */
export const editOf = (row: AccountRow): AccountEdit => Struct.pick(row, ...editableKeys)

/** SQL for trading accounts; no rules here. */
export class AccountsRepo extends Effect.Service<AccountsRepo>()("@trading-platform/core/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Whether venue credentials are stored (by the venues feature), read with the row.
    const stored = (venue: string) =>
      sql`EXISTS (SELECT 1 FROM venue_credentials c WHERE c.account_id = accounts.id AND c.venue = ${venue})`
    const row = sql`accounts.*, ${stored("venue1")} AS has_venue1_wallet, ${stored("venue2")} AS has_venue2_keys`

    const insert = SqlSchema.single({
      Request: Schema.Struct({
        ...EditableFields,
        user_id: UserId,
        account_type: AccountType,
        initial_capital: Schema.Number,
        now: Schema.DateFromSelf
      }),
      Result: AccountRow,
      execute: ({ now, ...a }) =>
        sql`
        INSERT INTO accounts ${
          sql.insert({ ...a, current_cash: a.initial_capital, frozen_cash: 0, created_at: now, updated_at: now })
        }
        RETURNING ${row}`
    })
    const findById = SqlSchema.findOne({
      Request: AccountId,
      Result: AccountRow,
      execute: (id) => sql`SELECT ${row} FROM accounts WHERE id = ${id}`
    })
    /** The row, locked until the surrounding transaction ends, so a read-check-write is not raced. */
    const findByIdForUpdate = SqlSchema.findOne({
      Request: AccountId,
      Result: AccountRow,
      execute: (id) => sql`SELECT ${row} FROM accounts WHERE id = ${id} FOR UPDATE`
    })
    const listByUser = SqlSchema.findAll({
      Request: Schema.Struct({ user_id: UserId, limit: Schema.Int, offset: Schema.Int }),
      Result: AccountRow,
      execute: (q) =>
        sql`
        SELECT ${row} FROM accounts WHERE user_id = ${q.user_id} ORDER BY id LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    const update = SqlSchema.single({
      Request: Schema.Struct({ id: AccountId, edit: AccountEdit, now: Schema.DateFromSelf }),
      Result: AccountRow,
      execute: ({ edit, id, now }) =>
        sql`
        UPDATE accounts SET ${sql.update({ ...edit, updated_at: now })} WHERE id = ${id} RETURNING ${row}`
    })
    const remove = (id: AccountId) => sql`DELETE FROM accounts WHERE id = ${id}`.pipe(Effect.asVoid)

    return { insert, findById, findByIdForUpdate, listByUser, update, remove } as const
  })
}) {}
