import * as Sse from "@effect/experimental/Sse"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { CurrentUser, MarketIntelligence, TradingApi } from "@trading-platform/core"
import { Effect, Exit, Option, Scope, Stream } from "effect"
import { presentedToken } from "../http/PresentedToken.js"
import { StreamLeases } from "./StreamLeases.js"

/** The session token of an authenticated request (authentication has checked it is there). */
export const sessionToken = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const presented = presentedToken(request)
  return presented._tag === "Token"
    ? Effect.succeed(presented.token)
    : Effect.dieMessage("an authenticated request presents a token")
})

export const StreamsHttpLive = HttpApiBuilder.group(TradingApi, "streams", (handlers) =>
  Effect.gen(function*() {
    const intelligence = yield* MarketIntelligence
    const leases = yield* StreamLeases
    return handlers.handle("marketIntelligence", ({ headers, urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentUser
        const token = yield* sessionToken
        // The lease and the stream's subscriptions outlive the handler: they are held in a scope
        // the response's stream closes when it ends, fails, or its client goes away.
        const scope = yield* Scope.make()
        const [lease, events] = yield* Effect.zip(
          leases.acquire(token),
          intelligence.open(caller, urlParams, Option.fromNullable(headers["last-event-id"]))
        ).pipe(
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
        return HttpServerResponse.stream(
          events.pipe(
            // A token revoked meanwhile ends the stream; the client's reconnection is then refused.
            Stream.interruptWhen(lease.ended),
            Stream.map(({ data, event, id }) =>
              Sse.encoder.write({ _tag: "Event", event, id, data: JSON.stringify(data) })
            ),
            Stream.encodeText,
            Stream.ensuring(Scope.close(scope, Exit.void))
          ),
          { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
        )
      }))
  }))
