import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { ConversationId, MessageId, MessageRole, ToolCallRecord } from "./Assistant.js"

export const ConversationRow = Schema.Struct({
  id: ConversationId,
  user_id: UserId,
  title: Schema.String,
  message_count: Schema.NumberFromString.pipe(Schema.int()),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type ConversationRow = typeof ConversationRow.Type

export const MessageRow = Schema.Struct({
  id: MessageId,
  role: MessageRole,
  content: Schema.String,
  tool_calls: Schema.parseJson(Schema.Array(ToolCallRecord)),
  prompt_tokens: Schema.NullOr(Schema.Int),
  completion_tokens: Schema.NullOr(Schema.Int),
  created_at: IsoTimestamp
})
export type MessageRow = typeof MessageRow.Type
/** A past message as the model is shown it: not its tool calls, whose results can hold a whole backtest. */
const PastMessageRow = MessageRow.pick("id", "role", "content")

/** Hourly quotas count rows of this kind. */
export const UsageKind = Schema.Literal("chat", "insight")
export type UsageKind = typeof UsageKind.Type

/** SQL for conversations, their messages and the assistant's usage; no rules here. */
export class ConversationsRepo extends Effect.Service<ConversationsRepo>()("@trading-platform/core/ConversationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const withCount = (where: Fragment) =>
      sql`
      SELECT c.*, (SELECT count(*) FROM ai_messages m WHERE m.conversation_id = c.id)::text AS message_count
      FROM ai_conversations c WHERE ${where}`

    const insert = SqlSchema.single({
      Request: Schema.Struct({ user_id: UserId, title: Schema.String, now: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: ConversationId }),
      execute: ({ now, ...c }) =>
        sql`
        INSERT INTO ai_conversations ${sql.insert({ ...c, created_at: now, updated_at: now })} RETURNING id`
    })
    const findById = SqlSchema.findOne({
      Request: ConversationId,
      Result: ConversationRow,
      execute: (id) => withCount(sql`c.id = ${id}`)
    })
    const listByUser = SqlSchema.findAll({
      Request: Schema.Struct({ user_id: UserId, limit: Schema.Int, offset: Schema.Int }),
      Result: ConversationRow,
      execute: (q) =>
        sql`${
          withCount(sql`c.user_id = ${q.user_id}`)
        } ORDER BY c.updated_at DESC, c.id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    const insertMessage = SqlSchema.single({
      Request: Schema.Struct({
        conversation_id: ConversationId,
        role: MessageRole,
        content: Schema.String,
        tool_calls: Schema.parseJson(Schema.Array(ToolCallRecord)),
        prompt_tokens: Schema.NullOr(Schema.Int),
        completion_tokens: Schema.NullOr(Schema.Int),
        now: Schema.DateFromSelf
      }),
      Result: MessageRow,
      execute: ({ now, ...m }) =>
        sql`UPDATE ai_conversations SET updated_at = ${now} WHERE id = ${m.conversation_id}`.pipe(
          Effect.zipRight(sql`INSERT INTO ai_messages ${sql.insert({ ...m, created_at: now })} RETURNING *`)
        )
    })
    const messages = SqlSchema.findAll({
      Request: Schema.Struct({ conversation_id: ConversationId, limit: Schema.Int, offset: Schema.Int }),
      Result: MessageRow,
      execute: (q) =>
        sql`
        SELECT * FROM ai_messages WHERE conversation_id = ${q.conversation_id} ORDER BY id LIMIT ${q.limit} OFFSET ${q.offset}`
    })
    /** The latest `limit` messages, oldest first: what the model is shown of the past. */
    const recentMessages = SqlSchema.findAll({
      Request: Schema.Struct({ conversation_id: ConversationId, limit: Schema.Int }),
      Result: PastMessageRow,
      execute: (q) => {
        const columns = columnsOf(sql, PastMessageRow)
        return sql`
        SELECT ${columns} FROM (SELECT ${columns} FROM ai_messages WHERE conversation_id = ${q.conversation_id}
          ORDER BY id DESC LIMIT ${q.limit}) recent
        ORDER BY id`
      }
    })
    const remove = (id: ConversationId) => sql`DELETE FROM ai_conversations WHERE id = ${id}`.pipe(Effect.asVoid)
    /** Deletes the conversations (and their messages) last touched before `before`. */
    const purgeUntouched = (before: Date) =>
      sql`DELETE FROM ai_conversations WHERE updated_at < ${before}`.pipe(Effect.asVoid)

    const recordUsage = (user_id: UserId, kind: UsageKind, now: Date) =>
      sql`INSERT INTO ai_usage ${sql.insert({ user_id, kind, created_at: now })}`.pipe(Effect.asVoid)
    /** Uses since `since`, and the oldest of them (when its hour ends, one more is allowed). */
    const usageSince = SqlSchema.single({
      Request: Schema.Struct({ user_id: UserId, kind: UsageKind, since: Schema.DateFromSelf }),
      Result: Schema.Struct({ count: Schema.NumberFromString, oldest: Schema.NullOr(Schema.DateFromSelf) }),
      execute: (q) =>
        sql`
        SELECT count(*)::text AS count, min(created_at) AS oldest FROM ai_usage
        WHERE user_id = ${q.user_id} AND kind = ${q.kind} AND created_at > ${q.since}`
    })

    return {
      insert,
      findById,
      listByUser,
      insertMessage,
      messages,
      recentMessages,
      remove,
      purgeUntouched,
      recordUsage,
      usageSince
    } as const
  })
}) {}
