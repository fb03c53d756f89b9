import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Authentication } from "../users/Authentication.js"
import { StorageStatistics } from "./StorageStatistics.js"

export { StorageStatistics, TableStats } from "./StorageStatistics.js"

/** `GET /api/system/storage-stats`. */
export class StorageStatsApi extends HttpApiGroup.make("storageStats")
  .add(
    HttpApiEndpoint.get("read", "/system/storage-stats")
      .addSuccess(StorageStatistics)
      .addError(ApiError.Forbidden)
      .annotate(
        OpenApi.Summary,
        "Rows and size of every table of the platform, from the database's own catalog; operators only (else 403)"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "System")
{}
