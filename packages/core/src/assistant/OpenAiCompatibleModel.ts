import * as Sse from "@effect/experimental/Sse"
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import type { HttpClient } from "@effect/platform/HttpClient"
import type { HttpClientError } from "@effect/platform/HttpClientError"
import { Clock, type Duration, Effect, Layer, Option, type Redacted, Schema, type Scope, Stream } from "effect"
import { isRetryableStatus, parseRetryAfter, retrySchedule } from "../retry/RetrySchedule.js"
import { AssistantModel, ModelEvent, ModelFailure, type ModelMessage, type ModelToolSpec } from "./AssistantModel.js"

export interface ProviderOptions {
  readonly baseUrl: string
  readonly model: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly timeout: Duration.Duration
}

// The streamed chunk of `POST /chat/completions`: only what we read.
const ToolCallDelta = Schema.Struct({
  index: Schema.Int,
  id: Schema.optional(Schema.NullOr(Schema.String)),
  function: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.NullOr(Schema.String)),
    arguments: Schema.optional(Schema.NullOr(Schema.String))
  }))
})
const Chunk = Schema.parseJson(Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallDelta)))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.Int, completion_tokens: Schema.Int })))
}))

/** A failed attempt, before retrying: 429 and 5xx may be retried (after `Retry-After` when sent). */
class AttemptFailed extends Schema.TaggedError<AttemptFailed>()("AttemptFailed", {
  status: Schema.Number,
  retryAfter: Schema.OptionFromSelf(Schema.DurationFromSelf)
}) {}

const toWire = (message: ModelMessage) => {
  switch (message.role) {
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls.length > 0
          ? {
            tool_calls: message.toolCalls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.arguments }
            }))
          }
          : {})
      }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content }
    default:
      return { role: message.role, content: message.content }
  }
}

const failure = (code: ModelFailure["code"], message: string) => new ModelFailure({ code, message })
const timedOut = () => failure("upstream_timeout", "The language model provider did not answer in time")

/**
 * A model served by any OpenAI-compatible server, over its streamed `POST /chat/completions`
 * (the endpoint compatible servers share). `@effect/ai-openai`'s client holds the base URL and the
 * key (sent as a bearer header and redacted from its logs); a 429 or 5xx before the first byte is
 * retried, honouring `Retry-After`.
 */
export const makeOpenAiCompatibleModel = (options: ProviderOptions) =>
  Effect.gen(function*() {
    // Imported when a provider is configured: the module and its generated schemas take a second to load.
    const { make } = yield* Effect.promise(() => import("@effect/ai-openai/OpenAiClient"))
    const openAi = yield* make({
      apiUrl: options.baseUrl,
      apiKey: Option.getOrUndefined(options.apiKey)
    })
    const http = openAi.client.httpClient

    const attempt = (body: unknown) =>
      Effect.gen(function*() {
        const response = yield* http.execute(
          HttpClientRequest.post("/chat/completions").pipe(HttpClientRequest.bodyUnsafeJson(body))
        ).pipe(
          Effect.timeoutFail({ duration: options.timeout, onTimeout: timedOut })
        )
        if (response.status >= 200 && response.status < 300) return response
        const now = yield* Clock.currentTimeMillis
        return yield* new AttemptFailed({
          status: response.status,
          retryAfter: parseRetryAfter(response.headers["retry-after"], now)
        })
      })

    const open = (body: unknown): Effect.Effect<HttpClientResponse.HttpClientResponse, ModelFailure, Scope.Scope> =>
      attempt(body).pipe(
        Effect.retry(retrySchedule((e: AttemptFailed | HttpClientError | ModelFailure) =>
          e._tag === "AttemptFailed"
            ? { retryable: isRetryableStatus(e.status), retryAfter: e.retryAfter }
            : { retryable: false, retryAfter: Option.none() }, { maxAttempts: 3 })),
        Effect.catchAll((e) =>
          e._tag === "ModelFailure"
            ? Effect.fail(e)
            : e._tag === "AttemptFailed"
            ? Effect.fail(
              e.status === 429
                ? failure("rate_limited", "The language model provider is rate limiting; try again later")
                : failure("upstream_error", `The language model provider answered ${e.status}`)
            )
            : Effect.fail(failure("upstream_error", "The language model provider could not be reached"))
        )
      )

    const turn = (messages: ReadonlyArray<ModelMessage>, tools: ReadonlyArray<ModelToolSpec>) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const response = yield* open({
          model: options.model,
          stream: true,
          stream_options: { include_usage: true },
          messages: messages.map(toWire),
          ...(tools.length > 0
            ? {
              tools: tools.map((t) => ({
                type: "function",
                function: { name: t.name, description: t.description, parameters: t.parameters }
              }))
            }
            : {})
        })
        // Tool calls arrive in pieces keyed by index; they are complete when the stream ends.
        const calls = new Map<number, { id: string; name: string; arguments: string }>()
        let finished = false
        const events = response.stream.pipe(
          Stream.decodeText(),
          Stream.pipeThroughChannel(Sse.makeChannel()),
          Stream.takeWhile((event) => {
            if (event.data.trim() === "[DONE]") finished = true
            return !finished
          }),
          Stream.mapEffect((event) => Schema.decode(Chunk)(event.data)),
          Stream.mapConcat((chunk) => {
            const out: Array<ModelEvent> = []
            for (const choice of chunk.choices) {
              if (choice.finish_reason) finished = true
              if (choice.delta?.content) out.push(ModelEvent.Text({ text: choice.delta.content }))
              for (const piece of choice.delta?.tool_calls ?? []) {
                const call = calls.get(piece.index) ?? { id: "", name: "", arguments: "" }
                call.id ||= piece.id ?? ""
                call.name += piece.function?.name ?? ""
                call.arguments += piece.function?.arguments ?? ""
                calls.set(piece.index, call)
              }
            }
            if (chunk.usage) {
              out.push(
                ModelEvent.Usage({
                  promptTokens: chunk.usage.prompt_tokens,
                  completionTokens: chunk.usage.completion_tokens
                })
              )
            }
            return out
          }),
          Stream.concat(Stream.suspend(() =>
            finished
              ? Stream.fromIterable(
                [...calls.entries()].map(([index, c]) => ModelEvent.ToolCall({ ...c, id: c.id || `call_${index}` }))
              )
              : Stream.fail(failure("upstream_error", "The language model provider's stream ended early"))
          )),
          Stream.catchTags({
            ParseError: () =>
              Stream.fail(failure("upstream_error", "The language model provider sent a malformed chunk")),
            ResponseError: () =>
              Stream.fail(failure("upstream_error", "The connection to the language model provider was cut"))
          }),
          Stream.timeoutFail(timedOut, options.timeout)
        )
        return events
      })).pipe(
        Stream.withSpan("AssistantModel.turn", { attributes: { model: options.model } })
      )

    return AssistantModel.of({ name: options.model, turn })
  })

/** The provider as the assistant's model; needs an `HttpClient`. */
export const OpenAiCompatibleModel = (options: ProviderOptions): Layer.Layer<AssistantModel, never, HttpClient> =>
  Layer.scoped(AssistantModel, makeOpenAiCompatibleModel(options))
