import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { IsoTimestamp } from "../sql/Columns.js"
import { SessionId, UserId } from "./User.js"

export const UserRow = Schema.Struct({
  id: UserId,
  email: Schema.String,
  username: Schema.String,
  password_hash: Schema.String,
  created_at: IsoTimestamp
})
export type UserRow = typeof UserRow.Type

export const SessionRow = Schema.Struct({
  id: SessionId,
  user_id: UserId,
  user_agent: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  last_used_at: Schema.NullOr(IsoTimestamp),
  expires_at: IsoTimestamp,
  revoked_at: Schema.NullOr(IsoTimestamp)
})
export type SessionRow = typeof SessionRow.Type

/** A session joined with its user, as authentication needs it. */
export const SessionWithUser = Schema.Struct({
  ...SessionRow.fields,
  email: Schema.String,
  username: Schema.String,
  user_created_at: IsoTimestamp
})

/** SQL for users and sessions; no rules here. */
export class UsersRepo extends Effect.Service<UsersRepo>()("@trading-platform/core/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertUser = SqlSchema.single({
      Request: Schema.Struct({
        email: Schema.String,
        username: Schema.String,
        password_hash: Schema.String,
        now: Schema.DateFromSelf
      }),
      Result: UserRow,
      execute: (u) =>
        sql`
        INSERT INTO users (email, username, password_hash, created_at, updated_at)
        VALUES (${u.email}, ${u.username}, ${u.password_hash}, ${u.now}, ${u.now})
        RETURNING *`
    })
    const findUserByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: UserRow,
      execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
    })
    const findUserById = SqlSchema.findOne({
      Request: UserId,
      Result: UserRow,
      execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
    })
    const updatePassword = (id: UserId, passwordHash: string, now: Date) =>
      sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = ${now} WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Every table of user data references users ON DELETE CASCADE, so this one statement removes it all. */
    const deleteUser = (id: UserId) => sql`DELETE FROM users WHERE id = ${id}`.pipe(Effect.asVoid)

    const insertSession = SqlSchema.single({
      Request: Schema.Struct({
        user_id: UserId,
        token_hash: Schema.String,
        user_agent: Schema.NullOr(Schema.String),
        now: Schema.DateFromSelf,
        expires_at: Schema.DateFromSelf
      }),
      Result: SessionRow,
      execute: (s) =>
        sql`
        INSERT INTO sessions (user_id, token_hash, user_agent, created_at, expires_at)
        VALUES (${s.user_id}, ${s.token_hash}, ${s.user_agent}, ${s.now}, ${s.expires_at})
        RETURNING id, user_id, user_agent, created_at, last_used_at, expires_at, revoked_at`
    })
    const findSessionByTokenHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: SessionWithUser,
      execute: (hash) =>
        sql`
        SELECT s.id, s.user_id, s.user_agent, s.created_at, s.last_used_at, s.expires_at, s.revoked_at,
          u.email, u.username, u.created_at AS user_created_at
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${hash}`
    })
    const findSessionsByTokenHashes = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ ...SessionWithUser.fields, token_hash: Schema.String }),
      execute: (hashes) =>
        sql`
        SELECT s.token_hash, s.id, s.user_id, s.user_agent, s.created_at, s.last_used_at, s.expires_at, s.revoked_at,
          u.email, u.username, u.created_at AS user_created_at
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE ${sql.in("s.token_hash", hashes)}`
    })
    const findSessionById = SqlSchema.findOne({
      Request: SessionId,
      Result: SessionRow,
      execute: (id) =>
        sql`
        SELECT id, user_id, user_agent, created_at, last_used_at, expires_at, revoked_at FROM sessions WHERE id = ${id}`
    })
    const listActiveSessions = SqlSchema.findAll({
      Request: Schema.Struct({ user_id: UserId, now: Schema.DateFromSelf, limit: Schema.Int, offset: Schema.Int }),
      Result: SessionRow,
      execute: (q) =>
        sql`
        SELECT id, user_id, user_agent, created_at, last_used_at, expires_at, revoked_at FROM sessions
        WHERE user_id = ${q.user_id} AND revoked_at IS NULL AND expires_at > ${q.now}
        ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    const touchSession = (id: SessionId, now: Date) =>
      sql`UPDATE sessions SET last_used_at = ${now} WHERE id = ${id}`.pipe(Effect.asVoid)
    const touchSessions = (ids: ReadonlyArray<SessionId>, now: Date) =>
      sql`UPDATE sessions SET last_used_at = ${now} WHERE ${sql.in("id", ids)}`.pipe(Effect.asVoid)
    const revokeSession = (id: SessionId, now: Date) =>
      sql`UPDATE sessions SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL`.pipe(Effect.asVoid)
    const revokeAllSessions = (userId: UserId, now: Date) =>
      sql`UPDATE sessions SET revoked_at = ${now} WHERE user_id = ${userId} AND revoked_at IS NULL`.pipe(Effect.asVoid)

    /** Deletes the sessions that expired or were revoked before `before`. */
    const purgeSessions = (before: Date) =>
      sql`DELETE FROM sessions WHERE expires_at < ${before} OR revoked_at < ${before}`.pipe(Effect.asVoid)

    return {
      deleteUser,
      purgeSessions,
      insertUser,
      findUserByEmail,
      findUserById,
      updatePassword,
      insertSession,
      findSessionByTokenHash,
      findSessionsByTokenHashes,
      findSessionById,
      listActiveSessions,
      touchSession,
      touchSessions,
      revokeSession,
      revokeAllSessions
    } as const
  })
}) {}
