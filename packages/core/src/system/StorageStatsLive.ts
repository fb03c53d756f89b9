import { StorageStats } from "./StorageStats.js"

export { StorageStats }

/** Storage statistics from the database's own catalog. */
export const StorageStatsLive = StorageStats.Default
