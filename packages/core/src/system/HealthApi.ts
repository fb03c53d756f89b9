import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Health } from "./Health.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export { Health, StorageKind } from "./Health.js"

/** `GET /api/health`: no token needed; 503 when storage does not answer. */
export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(ApiError.Unavailable)
      .annotate(OpenApi.Summary, "Liveness and storage check")
  )
  .annotate(OpenApi.Title, "Health")
{}
