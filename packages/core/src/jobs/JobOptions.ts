import type { Duration } from "effect"

/** How this instance runs one kind of job (every replica may run them; the database hands each to one). */
export interface JobOptions {
  /** Jobs this instance runs at once; 0 runs none (an API-only replica). */
  readonly concurrency: number
  /**
   * How often an idle worker looks for jobs without being woken (`JobWakeup`): a job left by a
   * dead worker, or one whose notification was lost.
   */
  readonly pollInterval: Duration.Duration
  /** How long a claim holds without renewal before another worker may take the job over. */
  readonly lease: Duration.Duration
  /** Claims of one job before it fails for good. */
  readonly maxAttempts: number
}
