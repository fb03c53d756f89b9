import { Schema } from "effect"

/**
 * Where a job is: `queued` until a worker claims it, then `running`, then one of the final three.
 * Every job table's `status` column holds these.
 */
export const JobStatus = Schema.Literal("queued", "running", "completed", "failed", "cancelled")
export type JobStatus = typeof JobStatus.Type
