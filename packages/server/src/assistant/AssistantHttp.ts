import * as Sse from "@effect/experimental/Sse"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { AssistantChat, type ChatEvent, CurrentUser, type RateLimited, TradingApi } from "@trading-platform/core"
import { Effect, Stream } from "effect"

/** A quota hit answers `Retry-After` as well as `retry_after`. */
const withRetryAfter = <A, E, R>(self: Effect.Effect<A, E | RateLimited, R>) =>
  Effect.tapError(self, (e) =>
    typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "RateLimited"
      ? HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String((e as RateLimited).retry_after))))
      : Effect.void)

const toSse = (event: ChatEvent) => {
  const { _tag, ...data } = event
  return Sse.encoder.write({ _tag: "Event", event: _tag, id: undefined, data: JSON.stringify(data) })
}

export const AssistantHttpLive = HttpApiBuilder.group(TradingApi, "assistant", (handlers) =>
  Effect.gen(function*() {
    const assistant = yield* AssistantChat
    return handlers
      .handle("tools", () => Effect.flatMap(CurrentUser, (caller) => assistant.tools(caller)))
      .handle("converse", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => assistant.converse(caller, payload)).pipe(withRetryAfter))
      .handle("conversations", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => assistant.list(caller, urlParams)))
      .handle("messages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => assistant.messages(caller, path.conversation_id, urlParams)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentUser, (caller) => assistant.remove(caller, path.conversation_id)))
      .handle("chat", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => assistant.chat(caller, payload)).pipe(
          withRetryAfter,
          Effect.map((events) =>
            HttpServerResponse.stream(events.pipe(Stream.map(toSse), Stream.encodeText), {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
            })
          )
        ))
  }))
