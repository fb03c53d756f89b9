import { Config, Duration } from "effect"
import type { JobOptions } from "../jobs/JobOptions.js"

/** An integer setting checked by `valid`; nesting after validating keeps the variable's name in the error. */
export const integerSetting = (name: string, fallback: number, message: string, valid: (n: number) => boolean) =>
  Config.integer().pipe(
    Config.validate({ message, validation: valid }),
    Config.nested(name),
    Config.withDefault(fallback)
  )

export const positiveInt = (name: string, fallback: number) =>
  integerSetting(name, fallback, "must be a whole number of at least 1", (n) => n >= 1)

/**
 * A kind of job's settings from `<PREFIX>_CONCURRENCY` (0..64), `<PREFIX>_POLL_INTERVAL_MS`,
 * `<PREFIX>_LEASE_MS` (at least 1000) and `<PREFIX>_MAX_ATTEMPTS`; by default 2 workers, a
 * `pollMs` poll (30 s: queued jobs wake their workers, see `JobWakeup`), a 30 s lease and 3 attempts.
 */
export const jobOptionsConfig = (prefix: string, pollMs = 30_000): Config.Config<JobOptions> =>
  Config.all({
    concurrency: integerSetting(`${prefix}_CONCURRENCY`, 2, "must be a whole number from 0 to 64", (n) =>
      n >= 0 && n <= 64),
    pollInterval: positiveInt(`${prefix}_POLL_INTERVAL_MS`, pollMs).pipe(Config.map(Duration.millis)),
    lease: integerSetting(`${prefix}_LEASE_MS`, 30_000, "must be a whole number of at least 1000", (n) =>
      n >= 1000).pipe(
        Config.map(Duration.millis)
      ),
    maxAttempts: positiveInt(`${prefix}_MAX_ATTEMPTS`, 3)
  })
