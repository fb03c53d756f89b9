import * as Sse from "@effect/experimental/Sse"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { AssistantChat, type ChatEvent, CurrentUser, Insights, TradingApi } from "@trading-platform/core"
import { Effect, Exit, Scope, Stream } from "effect"
import { presentedToken } from "../http/PresentedToken.js"
import { StreamLeases } from "../streams/StreamLeases.js"

const toSse = (event: ChatEvent) => {
  const { _tag, ...data } = event
  return Sse.encoder.write({ _tag: "Event", event: _tag, id: undefined, data: JSON.stringify(data) })
}

export const AssistantHttpLive = HttpApiBuilder.group(TradingApi, "assistant", (handlers) =>
  Effect.gen(function*() {
    const assistant = yield* AssistantChat
    const leases = yield* StreamLeases
    const insights = yield* Insights
    return handlers
      .handle("insight", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => insights.submit(caller, payload)))
      .handle("insightTask", ({ path }) => Effect.flatMap(CurrentUser, (caller) => insights.get(caller, path.task_id)))
      .handle("tools", () => Effect.flatMap(CurrentUser, (caller) => assistant.tools(caller)))
      .handle("converse", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => assistant.converse(caller, payload)))
      .handle("conversations", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => assistant.list(caller, urlParams)))
      .handle("messages", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          assistant.messages(caller, path.conversation_id, urlParams)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          assistant.remove(caller, path.conversation_id)))
      .handle("chat", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentUser
          const presented = presentedToken(yield* HttpServerRequest.HttpServerRequest)
          // The stream holds the token's lease until it ends; a refused or failed start lets it go at once.
          const lease = yield* Scope.make()
          const [ended, events] = yield* Effect.gen(function*() {
            const ended = presented._tag === "Token"
              ? (yield* Scope.extend(leases.acquire(presented.token), lease)).ended
              : Effect.never
            return [ended, yield* assistant.chat(caller, payload)] as const
          }).pipe(Effect.onError((cause) =>
            Scope.close(lease, Exit.failCause(cause))
          ))
          return HttpServerResponse.stream(
            events.pipe(
              // A token revoked meanwhile ends the answer.
              Stream.interruptWhen(ended),
              Stream.map(toSse),
              Stream.encodeText,
              Stream.ensuring(Scope.close(lease, Exit.void))
            ),
            { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
          )
        }))
  }))
