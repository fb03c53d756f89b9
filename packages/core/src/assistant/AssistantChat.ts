import { type AiError, Tool } from "@effect/ai"
import { Clock, Data, Effect, Option, Stream } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { RateLimited, UpstreamError, UpstreamTimeout } from "../http/Errors.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { CurrentUser, type CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import {
  type ChatContext,
  ChatMessage,
  Conversation,
  type ConversationId,
  ConversationList,
  type ConversationStart,
  type MessageId,
  MessageList,
  type ToolCallRecord,
  ToolList
} from "./Assistant.js"
import {
  AssistantModel,
  type ModelFailure,
  type ModelMessage,
  type ModelToolCall,
  type ModelToolSpec
} from "./AssistantModel.js"
import { AssistantToolkit, toolConfigured, type ToolFailure } from "./AssistantTools.js"
import { type ConversationRow, ConversationsRepo, type MessageRow, type UsageKind } from "./ConversationsRepo.js"

/** What `POST /api/ai/chat` streams, one Server-Sent Event each. */
export type ChatEvent = Data.TaggedEnum<{
  delta: { readonly text: string }
  tool_call: { readonly name: string; readonly args: unknown }
  tool_result: { readonly name: string; readonly result: unknown }
  done: { readonly conversation_id: ConversationId; readonly message_id: MessageId }
  error: { readonly code: string; readonly error: string }
}>
export const ChatEvent = Data.taggedEnum<ChatEvent>()

/** Tool rounds in one answer before the model must reply in words. */
const maxRounds = 5
/** Past messages the model is shown. */
const historyLength = 20
const hour = 60 * 60 * 1000

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const toConversation = ({ user_id: _, ...row }: ConversationRow) => new Conversation(row)
const toMessage = (row: MessageRow) => new ChatMessage(row)

const toolSpecs: ReadonlyArray<ModelToolSpec> = Object.values(AssistantToolkit.tools).map((tool) => ({
  name: tool.name,
  description: tool.description ?? "",
  parameters: Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)
}))

/** What a tool call past the message's budget answers, without running: the model reads it and replies in words. */
const overBudget = (max: number) => ({
  code: "rate_limited",
  error: `This message has used its ${max} tool calls; answer with what you have`
})

const parseArgs = (text: string): unknown => {
  try {
    return text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The assistant: conversations (owned by their user), the hourly quotas, and the chat loop that
 * lets the model call tools as the caller and streams what happens.
 */
export class AssistantChat extends Effect.Service<AssistantChat>()("@trading-platform/core/AssistantChat", {
  effect: Effect.gen(function*() {
    const repo = yield* ConversationsRepo
    const model = yield* AssistantModel
    const toolkit = yield* AssistantToolkit
    const { assistant: options } = yield* PlatformConfig
    const quota: Record<UsageKind, number> = { chat: options.chatPerHour, insight: options.insightsPerHour }

    const owned = (caller: CurrentUserShape, id: ConversationId) =>
      repo.findById(id).pipe(ownedBy(caller, `Conversation ${id}`), dieOnStorageFailure)

    /** Counts one use against the caller's hourly quota, or fails with how long to wait. */
    const consume = (caller: CurrentUserShape, kind: UsageKind) =>
      Effect.gen(function*() {
        const at = yield* now
        const used = yield* repo.usageSince({ user_id: caller.id, kind, since: new Date(at.getTime() - hour) })
        if (used.count >= quota[kind]) {
          const freed = (used.oldest?.getTime() ?? at.getTime()) + hour
          const wait = Math.max(1, Math.ceil((freed - at.getTime()) / 1000))
          return yield* new RateLimited({
            error: `At most ${quota[kind]} ${kind} requests per hour; retry in ${wait} s`,
            retry_after: wait
          })
        }
        yield* repo.recordUsage(caller.id, kind, at)
      }).pipe(dieOnStorageFailure)

    const tools = (caller: CurrentUserShape) =>
      toolConfigured(caller).pipe(
        Effect.map((configured) =>
          new ToolList({
            tools: toolSpecs.map((t) => ({
              id: t.name,
              name: t.name,
              description: t.description,
              configured: configured[t.name as keyof typeof configured]
            }))
          })
        ),
        dieOnStorageFailure,
        withRequestSpan("AssistantChat.tools", { attributes: { userId: caller.id } })
      )

    const list = (caller: CurrentUserShape, page: Pagination) =>
      repo.listByUser({ user_id: caller.id, ...pageOf(page) }).pipe(
        Effect.map((rows) => new ConversationList({ conversations: rows.map(toConversation) })),
        dieOnStorageFailure,
        withRequestSpan("AssistantChat.list", { attributes: { userId: caller.id } })
      )

    const messages = (caller: CurrentUserShape, id: ConversationId, page: Pagination) =>
      owned(caller, id).pipe(
        Effect.zipRight(repo.messages({ conversation_id: id, ...pageOf(page) })),
        Effect.map((rows) => new MessageList({ conversation_id: id, messages: rows.map(toMessage) })),
        dieOnStorageFailure,
        withRequestSpan("AssistantChat.messages", { attributes: { userId: caller.id, conversationId: id } })
      )

    const remove = (caller: CurrentUserShape, id: ConversationId) =>
      owned(caller, id).pipe(
        Effect.zipRight(repo.remove(id)),
        dieOnStorageFailure,
        withRequestSpan("AssistantChat.remove", { attributes: { userId: caller.id, conversationId: id } })
      )

    /** One tool call: arguments decoded by the tool's schema, run as the caller; a failure is the result. */
    const runTool = (caller: CurrentUserShape, call: ModelToolCall) =>
      toolkit.handle(call.name as keyof typeof toolkit.tools, parseArgs(call.arguments) as never).pipe(
        Effect.map((r): unknown => r.encodedResult),
        // The model named no such tool, or its arguments did not decode: it reads why and may try again.
        Effect.catchAll((e: AiError.AiError | ToolFailure): Effect.Effect<unknown> =>
          Effect.succeed(
            "_tag" in e
              ? { code: "invalid_input", error: `Invalid call of ${call.name}: ${e.description ?? e.message}` }
              : e
          )
        ),
        Effect.provideService(CurrentUser, caller),
        withRequestSpan("AssistantChat.tool", { attributes: { tool: call.name } })
      )

    /**
     * Starts a turn: checks the conversation and the quota, stores the user message, and answers
     * the stream of what the assistant does. The reply is stored when the stream ends, however it
     * ends (done, a model failure, or the client going away).
     */
    const chat = (
      caller: CurrentUserShape,
      input: {
        readonly message: string
        readonly conversation_id?: ConversationId | undefined
        readonly context?: ChatContext | undefined
      }
    ) =>
      Effect.gen(function*() {
        const existing = input.conversation_id === undefined ? undefined : yield* owned(caller, input.conversation_id)
        yield* consume(caller, "chat")
        const conversationId = existing?.id ??
          (yield* repo.insert({ user_id: caller.id, title: input.message.slice(0, 80), now: yield* now })).id
        const past = existing ? yield* repo.recentMessages({ conversation_id: existing.id, limit: historyLength }) : []
        yield* repo.insertMessage({
          conversation_id: conversationId,
          role: "user",
          content: input.message,
          tool_calls: [],
          prompt_tokens: null,
          completion_tokens: null,
          now: yield* now
        })

        const system = [
          `You are the assistant of a trading platform, answering ${caller.username}. Use the tools to read market data, the user's accounts, programs and backtests before answering; never invent numbers. Be brief.`,
          `Now: ${(yield* now).toISOString()}`,
          `Context: ${JSON.stringify(input.context ?? {})}`
        ].join("\n")
        const opening: Array<ModelMessage> = [
          { role: "system", content: system },
          ...past.map((m): ModelMessage =>
            m.role === "user"
              ? { role: "user", content: m.content }
              : { role: "assistant", content: m.content, toolCalls: [] }
          ),
          { role: "user", content: input.message }
        ]

        // What has been said so far: stored once, when the stream ends.
        const reply = {
          text: "",
          calls: [] as Array<ToolCallRecord>,
          prompt: null as number | null,
          completion: null as number | null
        }
        let saved: Option.Option<MessageId> = Option.none()
        // Tool calls this message may still make: one message cannot queue work without end.
        let budget = options.maxToolCalls
        const save = Effect.suspend(() =>
          Option.isSome(saved) ? Effect.succeed(saved.value) : Effect.gen(function*() {
            const row = yield* repo.insertMessage({
              conversation_id: conversationId,
              role: "assistant",
              content: reply.text,
              tool_calls: reply.calls,
              prompt_tokens: reply.prompt,
              completion_tokens: reply.completion,
              now: yield* now
            })
            saved = Option.some(row.id)
            return row.id
          }).pipe(Effect.orDie)
        )

        const round = (messages: ReadonlyArray<ModelMessage>, n: number): Stream.Stream<ChatEvent, ModelFailure> =>
          Stream.suspend(() => {
            let text = ""
            const calls: Array<ModelToolCall> = []
            const said = model.turn(messages, toolSpecs).pipe(
              Stream.filterMap((event): Option.Option<ChatEvent> => {
                switch (event._tag) {
                  case "Text":
                    text += event.text
                    reply.text += event.text
                    return Option.some(ChatEvent.delta({ text: event.text }))
                  case "ToolCall":
                    calls.push(event)
                    return Option.none()
                  case "Usage":
                    reply.prompt = (reply.prompt ?? 0) + event.promptTokens
                    reply.completion = (reply.completion ?? 0) + event.completionTokens
                    return Option.none()
                }
              })
            )
            const then = Stream.suspend(() => {
              if (calls.length === 0 || n >= maxRounds) return Stream.empty
              const results: Array<ModelMessage> = []
              const ran = Stream.fromIterable(calls).pipe(
                Stream.flatMap((call) => {
                  const args = parseArgs(call.arguments)
                  const result = budget-- > 0 ? runTool(caller, call) : Effect.succeed(overBudget(options.maxToolCalls))
                  return Stream.concat(
                    Stream.make(ChatEvent.tool_call({ name: call.name, args })),
                    Stream.fromEffect(
                      result.pipe(Effect.map((result) => {
                        reply.calls.push({ name: call.name, args, result })
                        results.push({
                          role: "tool",
                          toolCallId: call.id,
                          name: call.name,
                          content: JSON.stringify(result)
                        })
                        return ChatEvent.tool_result({ name: call.name, result })
                      }))
                    )
                  )
                })
              )
              return Stream.concat(
                ran,
                Stream.suspend(() =>
                  round([...messages, { role: "assistant", content: text, toolCalls: calls }, ...results], n + 1)
                )
              )
            })
            return Stream.concat(said, then)
          })

        return round(opening, 1).pipe(
          Stream.concat(Stream.fromEffect(Effect.map(save, (message_id) =>
            ChatEvent.done({ conversation_id: conversationId, message_id })))),
          Stream.catchAll((failure) =>
            Stream.fromEffect(Effect.as(save, ChatEvent.error({ code: failure.code, error: failure.message })))
          ),
          // The client went away: keep what was said.
          Stream.ensuring(Effect.ignore(save)),
          Stream.withSpan("AssistantChat.chat", { attributes: { userId: caller.id, conversationId } })
        )
      }).pipe(dieOnStorageFailure, withRequestSpan("AssistantChat.start", { attributes: { userId: caller.id } }))

    /** `POST /api/ai/conversations`: one whole turn, answered once the reply is stored. */
    const converse = (caller: CurrentUserShape, input: ConversationStart) =>
      Effect.gen(function*() {
        const events = yield* chat(caller, input)
        const last = yield* Stream.runLast(events)
        const end = Option.getOrThrow(last)
        if (end._tag === "error") {
          return yield* Effect.fail(
            end.code === "upstream_timeout"
              ? new UpstreamTimeout({ error: end.error })
              : end.code === "rate_limited"
              ? new RateLimited({ error: end.error, retry_after: 60 })
              : new UpstreamError({ error: end.error })
          )
        }
        if (end._tag !== "done") return yield* Effect.dieMessage("chat stream ended without done")
        return toConversation(Option.getOrThrow(yield* repo.findById(end.conversation_id)))
      }).pipe(dieOnStorageFailure, withRequestSpan("AssistantChat.converse", { attributes: { userId: caller.id } }))

    return { tools, list, messages, remove, chat, converse, consume } as const
  })
}) {}
