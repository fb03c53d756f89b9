import { Schema } from "effect"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"

/** A conversation's id. */
export const ConversationId = Schema.Int.pipe(Schema.positive(), Schema.brand("ConversationId"))
export type ConversationId = typeof ConversationId.Type

/** A stored message's id. */
export const MessageId = Schema.Int.pipe(Schema.positive(), Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

/** `{conversation_id}` in a path. */
export const ConversationPath = Schema.Struct({ conversation_id: idParam(ConversationId) })

/** One tool the assistant may call; `configured` says whether what it needs is set up for the caller. */
export const ToolInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  configured: Schema.Boolean
})

export class ToolList extends Schema.Class<ToolList>("ToolList")({ tools: Schema.Array(ToolInfo) }) {}

/** Free-form facts from the caller's screen (e.g. `{symbol: "BTC", timeframe: "1h"}`), given to the model. */
export const ChatContext = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type ChatContext = typeof ChatContext.Type

const Message = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(8000, { message: () => "must be at most 8000 characters" })
)

/** `POST /api/ai/conversations`: a new conversation, or the next turn of `conversation_id`. */
export const ConversationStart = Schema.Struct({
  message: Message,
  context: ChatContext,
  conversation_id: Schema.optionalWith(ConversationId, { nullable: true }),
  skill_ids: Schema.optionalWith(Schema.Array(Schema.Int), { nullable: true })
}).annotations({ parseOptions: { errors: "all" } })
export type ConversationStart = typeof ConversationStart.Type

/** `POST /api/ai/chat`: like a conversation turn, answered as Server-Sent Events. */
export const ChatRequest = Schema.Struct({
  message: Message,
  conversation_id: Schema.optionalWith(ConversationId, { nullable: true }),
  context: Schema.optionalWith(ChatContext, { default: () => ({}), nullable: true })
}).annotations({ parseOptions: { errors: "all" } })
export type ChatRequest = typeof ChatRequest.Type

/** The spec's "Conversation item". */
export class Conversation extends Schema.Class<Conversation>("Conversation")({
  id: ConversationId,
  title: Schema.String,
  message_count: Schema.Int,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class ConversationList extends Schema.Class<ConversationList>("ConversationList")({
  conversations: Schema.Array(Conversation)
}) {}

/** A tool the assistant called while answering, with what it was given and what it answered. */
export const ToolCallRecord = Schema.Struct({
  name: Schema.String,
  args: Schema.Unknown,
  result: Schema.Unknown
})
export type ToolCallRecord = typeof ToolCallRecord.Type

export const MessageRole = Schema.Literal("user", "assistant")

/** A stored message; token counts are null when the provider did not report them. */
export class ChatMessage extends Schema.Class<ChatMessage>("ChatMessage")({
  id: MessageId,
  role: MessageRole,
  content: Schema.String,
  tool_calls: Schema.Array(ToolCallRecord),
  prompt_tokens: Schema.NullOr(Schema.Int),
  completion_tokens: Schema.NullOr(Schema.Int),
  created_at: Schema.String
}) {}

export class MessageList extends Schema.Class<MessageList>("MessageList")({
  conversation_id: ConversationId,
  messages: Schema.Array(ChatMessage)
}) {}

export const MessagesParams = Pagination
