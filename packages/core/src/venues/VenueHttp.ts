import { FetchHttpClient, HttpClient, type HttpClientRequest } from "@effect/platform"
import { Clock, Duration, Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import type { VenueConnection } from "../config/PlatformConfig.js"
import { Unavailable, UpstreamError, UpstreamTimeout } from "../http/Errors.js"
import type { Exchange } from "./Venue.js"

/** A venue's answer below 500: its status and body text, for the caller to judge. */
export interface VenueReply {
  readonly status: number
  readonly text: string
  /** `Retry-After` in whole seconds, when the venue sent one (as seconds or as a date). */
  readonly retryAfter?: number
}

const retryAfterOf = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const seconds = /^\s*\d+\s*$/.test(header) ? Number(header) : (Date.parse(header) - now) / 1000
  return Number.isFinite(seconds) ? Math.max(0, Math.ceil(seconds)) : undefined
}

/** Real time, for what a venue compares with its own clock (deadlines, nonces), also under a test clock. */
export const wallClock = Clock.make()

/**
 * Requests to one venue's HTTP API with the configured timeout and retries. A venue that cannot be
 * reached (connection refused or broken) or answers another 5xx or an unexpected body is
 * `upstream_error`, one that answers 429/503 (it is there, and says it is busy) is `unavailable`,
 * one too slow is `upstream_timeout`: 503 stays the answer for our own storage being away. Only
 * transport errors and 5xx are retried, at once: a slow venue is not asked again. A request that
 * must not be repeated (an order the venue may have taken before failing) is sent with `retries` 0.
 */
export const makeVenueClient = (exchange: Exchange, connection: VenueConnection) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const timeoutMs = Duration.toMillis(connection.timeout)

    const send = (request: HttpClientRequest.HttpClientRequest, retries = connection.retries) =>
      client.execute(request).pipe(
        Effect.flatMap((response) =>
          Effect.map(response.text, (text): VenueReply => {
            const retryAfter = retryAfterOf(response.headers["retry-after"], Date.now())
            return { status: response.status, text, ...(retryAfter === undefined ? {} : { retryAfter }) }
          })
        ),
        Effect.timeoutFail({
          duration: connection.timeout,
          onTimeout: () => new UpstreamTimeout({ error: `${exchange} did not answer within ${timeoutMs} ms` })
        }),
        Effect.catchTags({
          RequestError: () => Effect.fail(new UpstreamError({ error: `${exchange} cannot be reached` })),
          ResponseError: () => Effect.fail(new UpstreamError({ error: `${exchange} broke off its answer` }))
        }),
        Effect.filterOrElse((reply) => reply.status < 500 && reply.status !== 429, (reply) =>
          Effect.fail(
            reply.status === 503 || reply.status === 429
              ? new Unavailable({
                error: `${exchange} is unavailable (HTTP ${reply.status})`,
                ...(reply.retryAfter === undefined ? {} : { retry_after: reply.retryAfter })
              })
              : new UpstreamError({ error: `${exchange} answered HTTP ${reply.status}` })
          )),
        Effect.retry({ times: retries, while: (e) => e._tag !== "UpstreamTimeout" }),
        Effect.withClock(wallClock)
      )

    const unexpected = (reply: VenueReply): Effect.Effect<never, UpstreamError> =>
      Effect.fail(new UpstreamError({ error: `${exchange} refused the request (HTTP ${reply.status})` }))

    /** The body of a 2xx reply decoded with the schema; any other reply goes to `otherwise`. */
    const decode = <A, I, E = never>(
      reply: VenueReply,
      schema: Schema.Schema<A, I>,
      otherwise: (reply: VenueReply) => Effect.Effect<A, E | UpstreamError> = unexpected
    ): Effect.Effect<A, E | UpstreamError> =>
      reply.status >= 200 && reply.status < 300
        ? Schema.decodeUnknown(Schema.parseJson(schema))(reply.text).pipe(
          Effect.mapError(() => new UpstreamError({ error: `${exchange} answered in an unexpected shape` }))
        )
        : otherwise(reply)

    return { send, decode, unexpected, baseUrl: connection.baseUrl } as const
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** Venues send numbers as strings. */
export const Num = Schema.NumberFromString

/** A client order id of 128 bits, the same for the same key (hex, as venue1's `cloid` and within venue2's 36 characters). */
export const clientOrderId = (key: string) => createHash("sha256").update(key).digest("hex").slice(0, 32)
