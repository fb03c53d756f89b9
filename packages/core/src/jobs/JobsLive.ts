import { Layer } from "effect"
import { JobWakeup } from "./JobWakeup.js"
import { Leases } from "./Leases.js"

export { BackgroundStart } from "./BackgroundStart.js"
export { JobWakeup, Leases }

/** What every kind of job and background loop shares on this instance: the wake-up of idle workers, and the leases. */
export const JobsLive = Layer.mergeAll(JobWakeup.Default, Leases.Default)
