import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { UserId } from "./User.js"

/** SQL for the operator flag of users; no rules here. */
export class OperatorsRepo extends Effect.Service<OperatorsRepo>()("@trading-platform/core/OperatorsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const isOperator = SqlSchema.findOne({
      Request: UserId,
      Result: Schema.Struct({ user_id: UserId }),
      execute: (id) => sql`SELECT user_id FROM operators WHERE user_id = ${id}`
    })
    const grant = (id: UserId, now: Date) =>
      sql`INSERT INTO operators (user_id, granted_at) VALUES (${id}, ${now}) ON CONFLICT (user_id) DO NOTHING`.pipe(
        Effect.asVoid
      )
    const revoke = (id: UserId) => sql`DELETE FROM operators WHERE user_id = ${id}`.pipe(Effect.asVoid)
    const listEmails = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ email: Schema.String }),
      execute: () => sql`SELECT u.email FROM operators o JOIN users u ON u.id = o.user_id ORDER BY lower(u.email)`
    })

    return { isOperator, grant, revoke, listEmails } as const
  })
}) {}
