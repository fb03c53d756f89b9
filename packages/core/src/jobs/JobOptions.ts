import { Config, Duration } from "effect"
import { integerSetting, positiveInt } from "../config/Settings.js"

/** How this instance runs one kind of job (every replica may run them; the database hands each to one). */
export interface JobOptions {
  /** Jobs this instance runs at once; 0 runs none (an API-only replica). */
  readonly concurrency: number
  /** How often an idle worker looks for jobs queued by other instances or left by a dead one. */
  readonly pollInterval: Duration.Duration
  /** How long a claim holds without renewal before another worker may take the job over. */
  readonly lease: Duration.Duration
  /** Claims of one job before it fails for good. */
  readonly maxAttempts: number
}

/**
 * A kind of job's settings from `<PREFIX>_CONCURRENCY` (0..64), `<PREFIX>_POLL_INTERVAL_MS`,
 * `<PREFIX>_LEASE_MS` (at least 1000) and `<PREFIX>_MAX_ATTEMPTS`; by default 2 workers, a 1 s
 * poll, a 30 s lease and 3 attempts.
 */
export const jobOptionsConfig = (prefix: string): Config.Config<JobOptions> =>
  Config.all({
    concurrency: integerSetting(`${prefix}_CONCURRENCY`, 2, "must be a whole number from 0 to 64", (n) => n >= 0 && n <= 64),
    pollInterval: positiveInt(`${prefix}_POLL_INTERVAL_MS`, 1_000).pipe(Config.map(Duration.millis)),
    lease: integerSetting(`${prefix}_LEASE_MS`, 30_000, "must be a whole number of at least 1000", (n) => n >= 1000).pipe(
      Config.map(Duration.millis)
    ),
    maxAttempts: positiveInt(`${prefix}_MAX_ATTEMPTS`, 3)
  })
