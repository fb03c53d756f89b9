import {
  ApiError,
  CurrentRequestId,
  type CurrentUserShape,
  type InternalError,
  type RateLimited,
  type Unauthorized,
  type Unavailable,
  User,
  Users
} from "@trading-platform/core"
import { Cause, Context, Effect, Option, Runtime, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { fromDefect } from "./ApiMiddleware.js"
import { authenticatePresented } from "./AuthenticationLive.js"
import { presentedToken } from "./PresentedToken.js"
import { type CountedRequest, RateLimits } from "./RateLimits.js"
import { requestIdFor } from "./RequestContext.js"

type LaneError = RateLimited | Unauthorized | Unavailable | InternalError

const encodeUser = Schema.encode(User)

/** An error as HttpApi answers it: its class's status and the envelope its contract schema encodes. */
const envelope = (e: LaneError) =>
  Effect.map(
    Schema.encode(ApiError[e._tag] as unknown as Schema.Schema<LaneError, object>)(e),
    (body) => ({ status: (e.constructor as unknown as { readonly status: number }).status, body })
  )

// A body, or a browser's cross-origin request (CORS headers), takes the full path.
const plainGet = (request: IncomingMessage) =>
  request.method === "GET" && request.headers.origin === undefined &&
  request.headers["transfer-encoding"] === undefined &&
  (request.headers["content-length"] === undefined || request.headers["content-length"] === "0")

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * `GET /api/users/me`, the read every client repeats to check its session, answered from
 * `node:http` before the platform's request pipeline (its request object, router, schema-driven
 * decoding and middleware chain cost about half the time of this one-statement read; see
 * docs/performance.md). The answer is the one the API gives: the same rate limits and headers,
 * request id, authentication, user encoding and error envelope, from the same services and
 * contract schemas. Every other request, and this one with a body or an `Origin`, returns `false`
 * and goes to the platform. Only used while Effect's tracer is off, as the API's spans are not made here.
 */
export class FastLane extends Effect.Service<FastLane>()("@trading-platform/server/FastLane", {
  effect: Effect.gen(function*() {
    const users = yield* Users
    const limits = yield* RateLimits
    // The services are in hand, so the lane's fibers run with an empty context: every span
    // (`Effect.withSpan` adds one to the context) would otherwise copy the platform's whole context.
    const { fiberRefs, runtimeFlags } = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(Runtime.make({ context: Context.empty(), fiberRefs, runtimeFlags }))

    const me = (request: CountedRequest, id: string) =>
      Effect.flatMap(limits.count(request), ({ exceeded, headers }) =>
        Option.match(exceeded, {
          onNone: (): Effect.Effect<CurrentUserShape, LaneError> => authenticatePresented(users, request.presented),
          onSome: Effect.fail
        }).pipe(
          Effect.flatMap(users.me),
          Effect.flatMap((user) => Effect.orDie(encodeUser(user))),
          Effect.map((body) => ({ status: 200, body })),
          Effect.catchAllCause((cause) =>
            Option.match(Cause.failureOption(cause), {
              onSome: (e): Effect.Effect<LaneError> => Effect.succeed(e),
              onNone: (): Effect.Effect<LaneError> => Effect.flip(fromDefect(cause))
            }).pipe(
              Effect.flatMap((e) => Effect.orDie(envelope(e))),
              // The request id goes in the envelope and in what is logged, as on the full path.
              Effect.locally(CurrentRequestId, id)
            )
          ),
          Effect.map((answer) => ({ ...answer, headers }))
        ))

    /** Answers `request` if it is the lane's; `false` leaves it to the platform. */
    const answer = (request: IncomingMessage, response: ServerResponse): boolean => {
      const url = request.url ?? "/"
      if (!plainGet(request) || pathOf(url) !== "/api/users/me") return false
      const id = requestIdFor(request.headers["x-request-id"] as string | undefined)
      const headers = request.headers as CountedRequest["headers"]
      const counted: CountedRequest = {
        method: "GET",
        url,
        headers,
        remoteAddress: request.socket.remoteAddress,
        presented: presentedToken({ headers, url })
      }
      runFork(me(counted, id)).addObserver((exit) => {
        if (exit._tag === "Failure") return void response.destroy()
        const { body, headers, status } = exit.value
        const json = JSON.stringify(body)
        response.writeHead(status, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(json),
          "x-request-id": id,
          ...headers
        }).end(json)
      })
      return true
    }

    return { answer } as const
  })
}) {}
