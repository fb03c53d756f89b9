import { Analytics } from "./Analytics.js"

export { Analytics }

/** Analytics of the caller's accounts and programs. */
export const AnalyticsLive = Analytics.Default
