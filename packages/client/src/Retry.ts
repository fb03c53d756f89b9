import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { isRetryableStatus, parseRetryAfter, type RetryOptions, retrySchedule } from "@trading-platform/core/contract"
import { Clock, Data, Effect, Option } from "effect"

// A response the schedule may retry; it never leaves `withRetry`.
class RetryableResponse extends Data.TaggedError("RetryableResponse")<{
  readonly response: HttpClientResponse.HttpClientResponse
  readonly now: number
}> {}

const isRetryableResponse = (e: unknown): e is RetryableResponse => e instanceof RetryableResponse

/**
 * Applies core's `retrySchedule` to every request of an HttpClient: 5xx and 429 answers are
 * retried (transport errors and other 4xx are not), honouring `Retry-After`. It works at the
 * HttpClient level because the status and headers are gone once HttpApiClient has decoded the
 * error; when attempts run out, the last answer is handed on to be decoded as usual.
 */
export const withRetry = (options: RetryOptions = {}) => <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
  HttpClient.transformResponse(client, (response) =>
    response.pipe(
      Effect.flatMap((res) =>
        isRetryableStatus(res.status)
          ? Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(new RetryableResponse({ response: res, now })))
          : Effect.succeed(res)
      ),
      Effect.retry(
        retrySchedule<E | RetryableResponse>(
          (e) =>
            isRetryableResponse(e)
              ? { retryable: true, retryAfter: parseRetryAfter(e.response.headers["retry-after"], e.now) }
              : { retryable: false, retryAfter: Option.none() },
          options
        )
      ),
      Effect.catchIf(isRetryableResponse, (e) => Effect.succeed(e.response))
    ))
