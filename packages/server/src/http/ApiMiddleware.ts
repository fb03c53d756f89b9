import {
  HttpApiBuilder,
  HttpApiError,
  HttpApp,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { SqlError } from "@effect/sql/SqlError"
import {
  describeIssues,
  InternalError,
  InvalidInput,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  summarizeIssues,
  TradingApi,
  Unavailable
} from "@trading-platform/core"
import { Cause, Effect, Option } from "effect"
import { guardContentType, isStreamedBody } from "./ContentType.js"
import { RateLimits } from "./RateLimits.js"
import { maxBodyBytes } from "./RequestContext.js"
import { allowedMethods } from "./Routes.js"
import { guardStorableText } from "./StorableText.js"

// Errors that mean the database is unreachable (PostgreSQL class 08, 53, 57P; socket errors).
const isConnectionFailure = (e: SqlError) => {
  const code = String((e.cause as { code?: unknown } | undefined)?.code ?? "")
  return /^(08|53|57P)/.test(code) || /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND)$/.test(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
      String((e.cause as Error | undefined)?.message)
    )
}

const bodyTooLarge = new PayloadTooLarge({ error: `Request body exceeds ${maxBodyBytes} bytes` })

// A declared Content-Length over the cap is refused before the body is read; a streamed body's handler caps its own.
const guardContentLength = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const length = Number(request.headers["content-length"] ?? 0)
  return length > maxBodyBytes && !isStreamedBody(request) ? Effect.fail(bodyTooLarge) : Effect.void
})

/** Turns every failure that is not already a declared API error into one, so all answer the envelope. */
const toDeclaredError = (
  cause: Cause.Cause<unknown>
): Effect.Effect<never, unknown, HttpServerRequest.HttpServerRequest> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    if (e instanceof HttpApiError.HttpApiDecodeError) {
      const issues = describeIssues(e.issues)
      return Effect.fail(
        new InvalidInput({
          error: issues.length > 0 ? `Invalid request: ${summarizeIssues(issues)}` : "Invalid request",
          issues
        })
      )
    }
    // A 429 from an endpoint (e.g. a second stream), or a 503 whose venue said how long to wait,
    // says so in `Retry-After`, as the limiter's 429 does.
    if (e instanceof RateLimited || (e instanceof Unavailable && e.retry_after !== undefined)) {
      return HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(e.retry_after)))
      ).pipe(Effect.zipRight(Effect.failCause(cause)))
    }
    if (e instanceof HttpServerError.RouteNotFound) {
      const path = e.request.url.split("?", 1)[0]
      const allowed = allowedMethods(e.request)
      if (allowed.length === 0) return Effect.fail(new NotFound({ error: `No route for ${e.request.method} ${path}` }))
      return HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "allow", allowed.join(", ")))
      ).pipe(
        Effect.zipRight(
          Effect.fail(
            new MethodNotAllowed({ error: `${path} does not take ${e.request.method}; it takes ${allowed.join(", ")}` })
          )
        )
      )
    }
    return Effect.failCause(cause)
  }
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (defect instanceof HttpServerError.RequestError && defect.reason === "Decode") {
    return Effect.fail(
      String((defect.cause as Error | undefined)?.message) === "maxBytes exceeded"
        ? bodyTooLarge
        : new InvalidInput({ error: "The request body is not valid JSON", issues: [] })
    )
  }
  return fromDefect(cause)
}

/** A defect as the error to answer: 503 when storage is unreachable, else 500; both are logged. */
export const fromDefect = (cause: Cause.Cause<unknown>): Effect.Effect<never, Unavailable | InternalError> => {
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (defect instanceof SqlError && isConnectionFailure(defect)) {
    return Effect.logError("storage unavailable", cause).pipe(
      Effect.zipRight(Effect.fail(new Unavailable({ error: "Storage is unavailable; try again shortly" })))
    )
  }
  return Effect.logError("unhandled failure", cause).pipe(
    Effect.zipRight(Effect.fail(new InternalError({ error: "Internal server error" })))
  )
}

/**
 * The API-level middleware: rate limits first (their headers go on every answer), then the body
 * cap, its content type and storable text, then the endpoint; any failure becomes a declared error that HttpApi encodes as the envelope.
 */
export const ApiMiddlewareLive = HttpApiBuilder.middleware(
  TradingApi,
  Effect.map(RateLimits, (limits) => (app: HttpApp.Default) =>
    limits.check.pipe(
      Effect.zipRight(guardContentLength),
      Effect.zipRight(guardContentType),
      Effect.zipRight(guardStorableText),
      Effect.zipRight(app),
      Effect.catchAllCause(toDeclaredError)
    ) as HttpApp.Default)
)
