import { HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { withRetry } from "@trading-platform/client"
import { Clock, Effect, Fiber, Random, Ref, TestClock } from "effect"

type Answer = { readonly status: number; readonly headers?: Record<string, string> } | "transport error"

/**
 * Sends one request through `withRetry(options)` to a fake transport that gives the answers in
 * turn (the last one forever), with the TestClock running; yields the final status and the wait
 * in milliseconds before each retry.
 */
const run = (answers: ReadonlyArray<Answer>, options: Parameters<typeof withRetry>[0] = {}) =>
  Effect.gen(function*() {
    const times = yield* Ref.make<ReadonlyArray<number>>([])
    const transport = HttpClient.make((request) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const sent = (yield* Ref.updateAndGet(times, (ts) => [...ts, now])).length
        const answer = answers[Math.min(sent, answers.length) - 1]!
        if (answer === "transport error") {
          return yield* new HttpClientError.RequestError({ request, reason: "Transport", description: "refused" })
        }
        return HttpClientResponse.fromWeb(request, new Response(null, answer))
      })
    )
    const fiber = yield* transport.pipe(withRetry(options)).execute(HttpClientRequest.get("http://fake/api/health"))
      .pipe(
        Effect.map((response) => response.status),
        Effect.catchTag("RequestError", (e) => Effect.succeed(e.reason)),
        Effect.fork
      )
    yield* TestClock.adjust("10 minutes")
    const status = yield* Fiber.join(fiber)
    const at = yield* Ref.get(times)
    return { status, attempts: at.length, waits: at.slice(1).map((t, i) => t - at[i]!) }
  }).pipe(Effect.withRandom(Random.make("retry-test")))

const unavailable = { status: 503 }

describe("withRetry", () => {
  it.effect("waits 1s, 2s, 4s, … doubling, capped at 30 s, each plus 0..500 ms of jitter", () =>
    Effect.gen(function*() {
      const { attempts, status, waits } = yield* run([unavailable], { maxAttempts: 10 })
      expect({ attempts, status }).toEqual({ attempts: 10, status: 503 })
      const backoff = [1, 2, 4, 8, 16, 30, 30, 30, 30].map((s) => s * 1000)
      const jitter = waits.map((w, i) => w - backoff[i]!)
      expect(Math.min(...jitter)).toBeGreaterThanOrEqual(0)
      expect(Math.max(...jitter)).toBeLessThanOrEqual(500)
      // jitter is random, not a constant offset
      expect(new Set(jitter).size).toBeGreaterThan(1)
    }))

  it.effect("gives up after 5 attempts by default and hands the last answer on", () =>
    Effect.gen(function*() {
      expect(yield* run([{ status: 500 }])).toMatchObject({ attempts: 5, status: 500 })
      expect(yield* run([{ status: 502 }], { maxAttempts: 2 })).toMatchObject({ attempts: 2, status: 502 })
    }))

  it.effect("retries 5xx and 429 until an answer that is not retryable", () =>
    Effect.gen(function*() {
      const result = yield* run([{ status: 500 }, { status: 429 }, { status: 504 }, { status: 200 }])
      expect(result).toMatchObject({ attempts: 4, status: 200 })
    }))

  it.effect("never retries a 4xx other than 429, nor a transport error", () =>
    Effect.gen(function*() {
      for (const status of [400, 401, 403, 404, 409, 413, 422]) {
        expect(yield* run([{ status }, { status: 200 }])).toMatchObject({ attempts: 1, status })
      }
      expect(yield* run(["transport error", { status: 200 }])).toMatchObject({ attempts: 1, status: "Transport" })
    }))

  it.effect("waits at least Retry-After (seconds or an HTTP-date), and never less than the backoff", () =>
    Effect.gen(function*() {
      const seconds = yield* run([{ status: 429, headers: { "retry-after": "7" } }, { status: 200 }])
      expect(seconds).toMatchObject({ attempts: 2, status: 200, waits: [7000] })
      const inTwelveSeconds = new Date((yield* Clock.currentTimeMillis) + 12_000).toUTCString()
      const date = yield* run([{ status: 503, headers: { "retry-after": inTwelveSeconds } }, { status: 200 }])
      expect(date.waits).toEqual([12_000])
      const shorter = yield* run([{ status: 503 }, { status: 503 }, { status: 429, headers: { "retry-after": "1" } }, {
        status: 200
      }])
      expect(shorter.waits[2]).toBeGreaterThanOrEqual(4000)
    }))
})
