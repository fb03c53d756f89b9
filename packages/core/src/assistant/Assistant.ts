import { Schema } from "effect"
import { idParam, StoredId } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { documentTrimmed } from "../http/TrimmedText.js"
import { MarketSymbol } from "../market/Market.js"
import { Exchange, Timeframe } from "../venues/Venue.js"

/** A conversation's id. */
export const ConversationId = StoredId.pipe(Schema.brand("ConversationId"))
export type ConversationId = typeof ConversationId.Type

/** A stored message's id. */
export const MessageId = StoredId.pipe(Schema.brand("MessageId"))
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

const Message = documentTrimmed(
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(8000, { message: () => "must be at most 8000 characters" })
  ),
  { max: 8000, nonEmpty: true }
)

/** `POST /api/ai/conversations`: a new conversation, or the next turn of `conversation_id`. */
export const ConversationStart = Schema.Struct({
  message: Message,
  context: ChatContext,
  conversation_id: Schema.optionalWith(ConversationId, { nullable: true }),
  skill_ids: Schema.optionalWith(Schema.Array(Schema.Int), { nullable: true })
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ message: "How is BTC doing on the 1h chart?", context: { symbol: "BTC", timeframe: "1h" } }]
})
export type ConversationStart = typeof ConversationStart.Type

/** `POST /api/ai/chat`: like a conversation turn, answered as Server-Sent Events. */
export const ChatRequest = Schema.Struct({
  message: Message,
  conversation_id: Schema.optionalWith(ConversationId, { nullable: true }),
  context: Schema.optionalWith(ChatContext, { nullable: true })
}).annotations({ parseOptions: { errors: "all" }, examples: [{ message: "How is BTC doing?" }] })
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

/** An insight job's id; on the wire `task_id` is its text. */
export const InsightId = StoredId.pipe(Schema.brand("InsightId"))
export type InsightId = typeof InsightId.Type

/** `{task_id}` in a path. */
// One type wherever `task_id` appears: text of the id, in answers and in paths alike.
const taskIdText = { type: "string", pattern: "^[1-9][0-9]{0,9}$" } as const

export const InsightPath = Schema.Struct({ task_id: idParam(InsightId).annotations({ jsonSchema: taskIdText }) })

/** What an insight request leaves out; the service fills it in. */
export const insightDefaults = { symbol: "BTC", timeframe: "1h", exchange: "venue1" } as const

/** `POST /api/ai/insight`: every field optional, as the spec says; BTC on 1h by default. */
export const InsightRequest = Schema.Struct({
  symbol: Schema.optionalWith(MarketSymbol, { nullable: true }),
  timeframe: Schema.optionalWith(Timeframe, { nullable: true }),
  exchange: Schema.optionalWith(Exchange, { nullable: true }),
  prompt: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2000)), { nullable: true })
}).annotations({ parseOptions: { errors: "all" }, examples: [{ symbol: "BTC", timeframe: "1h" }] })
export type InsightRequest = typeof InsightRequest.Type

export const InsightStatus = Schema.Literal("queued", "running", "completed", "failed", "cancelled")

/** What an insight concludes, and from which facts. */
export const InsightResult = Schema.Struct({
  symbol: Schema.String,
  timeframe: Timeframe,
  sentiment: Schema.Literal("bullish", "bearish", "neutral"),
  summary: Schema.String,
  key_levels: Schema.Struct({ support: Schema.Array(Schema.Number), resistance: Schema.Array(Schema.Number) }),
  drivers: Schema.Array(Schema.String),
  risks: Schema.Array(Schema.String),
  /**
   * The facts it read (market data, indicators, the ranking table, news); `fallback` says why the
   * built-in analyst answered although a language model is configured.
   */
  sources: Schema.Array(Schema.Struct({ name: Schema.String, detail: Schema.String })),
  /** Who read the facts: `built-in analyst`, or the configured model's name. */
  analyst: Schema.String,
  generated_at: Schema.String
})
export type InsightResult = typeof InsightResult.Type

/** `POST /api/ai/insight` answers `{task_id, status}`; `GET /api/ai/insight/{task_id}` adds `result` or `error`. */
export class InsightTask extends Schema.Class<InsightTask>("InsightTask")({
  task_id: Schema.String.annotations({ jsonSchema: taskIdText }),
  status: InsightStatus,
  result: Schema.optional(InsightResult),
  error: Schema.optional(Schema.String)
}) {}
