import { JobWakeup } from "./JobWakeup.js"

export { JobWakeup }

/** What every kind of job shares on this instance: the wake-up of idle workers. */
export const JobsLive = JobWakeup.Default
