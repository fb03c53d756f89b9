import { Duration, Effect, Option, Random, Schedule } from "effect"

export interface RetryOptions {
  /** Total attempts including the first, 1 to 10 (default 5). */
  readonly maxAttempts?: number | undefined
  /** First wait (default 1 second); each later wait doubles. */
  readonly base?: Duration.DurationInput | undefined
  /** Longest backoff wait before jitter (default 30 seconds). */
  readonly cap?: Duration.DurationInput | undefined
  /** Up to this much random time is added to every wait (default 500 millis). */
  readonly maxJitter?: Duration.DurationInput | undefined
}

/** What the schedule needs to know about a failure. */
export interface RetryDecision {
  /** Whether this failure may be retried (for HTTP: 5xx and 429 only). */
  readonly retryable: boolean
  /** The server's `Retry-After`, when it sent one: the wait is at least this long. */
  readonly retryAfter: Option.Option<Duration.Duration>
}

/** Whether an HTTP status may be retried: 429 and every 5xx, never another 4xx. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/** Parses `Retry-After`: delta-seconds or an HTTP-date. */
export const parseRetryAfter = (value: string | undefined, now: number): Option.Option<Duration.Duration> => {
  if (value === undefined || value.trim() === "") return Option.none()
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Option.some(Duration.seconds(Math.max(0, seconds)))
  const at = Date.parse(value)
  return Number.isNaN(at) ? Option.none() : Option.some(Duration.millis(Math.max(0, at - now)))
}

/**
 * The client retry rule (`docs/client.md`) as a Schedule over failures: wait 1 s, doubling
 * each attempt, capped at 30 s, plus up to 500 ms of jitter; at least `Retry-After` when the server
 * sent one; stop on a failure that is not retryable or after `maxAttempts` attempts in all.
 * `classify` tells the schedule what it needs about each failure.
 */
export const retrySchedule = <E>(classify: (error: E) => RetryDecision, options: RetryOptions = {}) => {
  const maxAttempts = options.maxAttempts ?? 5
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 10) {
    throw new RangeError(`maxAttempts must be a whole number from 1 to 10, got ${maxAttempts}`)
  }
  const cap = Duration.decode(options.cap ?? "30 seconds")
  const jitterMillis = Duration.toMillis(options.maxJitter ?? "500 millis")
  return Schedule.exponential(options.base ?? "1 second", 2).pipe(
    Schedule.modifyDelay((_, delay) => Duration.min(delay, cap)),
    Schedule.addDelayEffect(() => Effect.map(Random.nextIntBetween(0, jitterMillis + 1), Duration.millis)),
    Schedule.intersect(Schedule.recurs(maxAttempts - 1)),
    Schedule.intersect(Schedule.identity<E>()),
    Schedule.modifyDelay(([, error], delay) =>
      Option.match(classify(error).retryAfter, { onNone: () => delay, onSome: (ra) => Duration.max(ra, delay) })
    ),
    Schedule.whileInput((error: E) => classify(error).retryable)
  )
}
