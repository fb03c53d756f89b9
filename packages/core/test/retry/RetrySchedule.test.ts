import { describe, expect, it } from "@effect/vitest"
import { isRetryableStatus, parseRetryAfter, type RetryDecision, retrySchedule } from "@trading-platform/core/contract"
import { Duration, Effect, Fiber, Option, Random, Schedule, TestClock } from "effect"

interface Failure {
  readonly status: number
  readonly retryAfterSeconds?: number
}
const classify = (f: Failure): RetryDecision => ({
  retryable: isRetryableStatus(f.status),
  retryAfter: Option.map(Option.fromNullable(f.retryAfterSeconds), Duration.seconds)
})

/** Runs a call that fails with `failures` in turn under the schedule; answers when each attempt started. */
const attemptTimes = (failures: ReadonlyArray<Failure>, options: Parameters<typeof retrySchedule>[1]) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    const start = yield* TestClock.currentTimeMillis
    const call = Effect.gen(function*() {
      times.push((yield* TestClock.currentTimeMillis) - start)
      return yield* Effect.fail(failures[Math.min(times.length - 1, failures.length - 1)]!)
    })
    const fiber = yield* Effect.fork(Effect.retry(call, retrySchedule(classify, options)))
    yield* TestClock.adjust("10 minutes")
    const last = yield* Fiber.join(fiber).pipe(Effect.flip)
    return { times, last }
  })

describe("retrySchedule", () => {
  it.effect("waits 1 s, then doubles each attempt (no jitter), and stops after maxAttempts", () =>
    Effect.gen(function*() {
      const { times } = yield* attemptTimes([{ status: 503 }], { maxAttempts: 5, maxJitter: 0 })
      expect(times).toEqual([0, 1000, 3000, 7000, 15000])
    }))

  it.effect("caps each wait at 30 s", () =>
    Effect.gen(function*() {
      const { times } = yield* attemptTimes([{ status: 500 }], { maxAttempts: 8, maxJitter: 0 })
      const waits = times.slice(1).map((t, i) => t - times[i]!)
      expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
    }))

  it.effect("adds between 0 and 500 ms of jitter to every wait", () =>
    Effect.gen(function*() {
      for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const { times } = yield* attemptTimes([{ status: 502 }], { maxAttempts: 4 }).pipe(
          Effect.withRandom(Random.make(seed))
        )
        const waits = times.slice(1).map((t, i) => t - times[i]!)
        ;[1000, 2000, 4000].forEach((base, i) => {
          expect(waits[i]).toBeGreaterThanOrEqual(base)
          expect(waits[i]).toBeLessThanOrEqual(base + 500)
        })
      }
    }))

  it.effect("waits at least Retry-After when the server sends it, and the backoff when that is longer", () =>
    Effect.gen(function*() {
      const { times } = yield* attemptTimes(
        [{ status: 429, retryAfterSeconds: 7 }, { status: 503 }, { status: 429, retryAfterSeconds: 1 }, {
          status: 503
        }],
        { maxAttempts: 4, maxJitter: 0 }
      )
      expect(times).toEqual([0, 7000, 9000, 13000])
    }))

  it.effect("never retries a 4xx other than 429", () =>
    Effect.gen(function*() {
      for (const status of [400, 401, 403, 404, 409, 413, 422]) {
        const { last, times } = yield* attemptTimes([{ status }], { maxAttempts: 5, maxJitter: 0 })
        expect(times).toEqual([0])
        expect(last.status).toBe(status)
      }
    }))

  it.effect("stops retrying as soon as a failure is not retryable", () =>
    Effect.gen(function*() {
      const { last, times } = yield* attemptTimes([{ status: 503 }, { status: 404 }], { maxAttempts: 5, maxJitter: 0 })
      expect(times).toEqual([0, 1000])
      expect(last.status).toBe(404)
    }))

  it("refuses an attempt limit outside 1..10", () => {
    expect(() => retrySchedule(classify, { maxAttempts: 0 })).toThrow(RangeError)
    expect(() => retrySchedule(classify, { maxAttempts: 11 })).toThrow(RangeError)
    expect(Schedule.isSchedule(retrySchedule(classify, { maxAttempts: 10 }))).toBe(true)
  })
})

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(parseRetryAfter("3", now)).toEqual(Option.some(Duration.seconds(3)))
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toEqual(Option.some(Duration.millis(5000)))
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toEqual(Option.some(Duration.millis(0)))
    expect(parseRetryAfter(undefined, now)).toEqual(Option.none())
    expect(parseRetryAfter("soon", now)).toEqual(Option.none())
  })
})
