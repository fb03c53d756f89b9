import {
  FileSystem,
  HttpApp,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { CurrentRequestId, isValidRequestId } from "@trading-platform/core"
import { Context, Effect, FiberRef, Option } from "effect"
import { randomUUID } from "node:crypto"

/** Bodies over this answer 413 `payload_too_large`. */
export const maxBodyBytes = 1024 * 1024
const maxBodySize = Option.some(FileSystem.Size(maxBodyBytes))

/** The id of a request: the caller's `X-Request-Id` when it is a valid one, else a new one. */
export const requestIdFor = (incoming: string | undefined) =>
  incoming !== undefined && isValidRequestId(incoming) ? incoming : randomUUID()

/**
 * Outermost middleware: a request id for every request (an incoming valid `X-Request-Id` is
 * reused), echoed in `X-Request-Id` on every answer and read by the error encoder; and the body
 * size cap. Both hold for the rest of the fiber it runs in, so it is for a fiber of the request's
 * own, as `HttpServer.serve` and web handlers run each. Pre-response handlers are used because at
 * this level the response is already written.
 */
export const requestContext = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const id = requestIdFor(request.headers["x-request-id"])
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", id))
    )
    // Set for the rest of the request's fiber, which is its own, rather than `Effect.locally` and
    // `withMaxBodySize`: each of those is an acquire-use-release restoring a value nothing reads after.
    yield* FiberRef.set(CurrentRequestId, id)
    yield* FiberRef.update(FiberRef.currentContext, Context.add(HttpIncomingMessage.MaxBodySize, maxBodySize))
    return yield* app
  })
)
