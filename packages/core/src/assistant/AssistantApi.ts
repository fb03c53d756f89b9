import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import {
  ChatRequest,
  Conversation,
  ConversationList,
  ConversationPath,
  ConversationStart,
  InsightPath,
  InsightRequest,
  InsightTask,
  MessageList,
  ToolList
} from "./Assistant.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./Assistant.js"

/** The AI assistant: its tools, the caller's conversations, and the streamed chat: `/api/ai/...`. */
export class AssistantApi extends HttpApiGroup.make("assistant")
  .add(
    HttpApiEndpoint.get("tools", "/ai/tools")
      .addSuccess(ToolList)
      .annotate(OpenApi.Summary, "Tools the assistant can call, and whether each is set up for the caller")
  )
  .add(
    HttpApiEndpoint.post("converse", "/ai/conversations")
      .setPayload(strictBody(ConversationStart))
      .addSuccess(Conversation, { status: 201 })
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Summary,
        "Start a conversation, or continue `conversation_id`; stores the message and the reply"
      )
  )
  .add(
    HttpApiEndpoint.get("conversations", "/ai/conversations")
      .setUrlParams(Pagination)
      .addSuccess(ConversationList)
      .annotate(OpenApi.Summary, "The caller's conversations, most recently active first")
  )
  .add(
    HttpApiEndpoint.get("messages", "/ai/conversations/:conversation_id/messages")
      .setPath(ConversationPath)
      .setUrlParams(Pagination)
      .addSuccess(MessageList)
      .annotate(OpenApi.Summary, "A conversation's messages, oldest first, with the tools each reply called")
  )
  .add(
    HttpApiEndpoint.del("remove", "/ai/conversations/:conversation_id")
      .setPath(ConversationPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a conversation and its messages")
  )
  .add(
    HttpApiEndpoint.post("chat", "/ai/chat")
      .setPayload(strictBody(ChatRequest))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(
        OpenApi.Description,
        "Server-Sent Events: `delta {text}`, `tool_call {name, args}`, `tool_result {name, result}`, then `done {conversation_id, message_id}` or `error {code, error}`. One open stream per token."
      )
      .annotate(OpenApi.Summary, "Ask the assistant; the answer streams as it is written")
  )
  .add(
    HttpApiEndpoint.post("insight", "/ai/insight")
      .setPayload(strictBody(InsightRequest))
      .addError(ApiError.SymbolNotListed)
      .addSuccess(InsightTask, { status: 202 })
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Summary,
        "Queue an insight on a symbol: sentiment, key levels, drivers, risks"
      )
  )
  .add(
    HttpApiEndpoint.get("insightTask", "/ai/insight/:task_id")
      .setPath(InsightPath)
      .addSuccess(InsightTask)
      .annotate(
        OpenApi.Summary,
        "An insight job: queued, running, then completed with its result or failed with its error"
      )
  )
  // Another user's conversation or insight; an unknown id answers the API-wide 404; the hourly quotas the API-wide 429.
  .addError(ApiError.Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Assistant")
{}
