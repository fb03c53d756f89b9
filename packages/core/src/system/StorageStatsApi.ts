import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../users/Authentication.js"
import { StorageStatistics } from "./StorageStats.js"

export { StorageStatistics, TableStats } from "./StorageStats.js"

/** `GET /api/system/storage-stats`. */
export class StorageStatsApi extends HttpApiGroup.make("storageStats")
  .add(
    HttpApiEndpoint.get("read", "/system/storage-stats")
      .addSuccess(StorageStatistics)
      .annotate(OpenApi.Summary, "Rows and size of every table of the platform, from the database's own catalog")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "System")
{}
