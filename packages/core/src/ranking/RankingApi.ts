import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Authentication } from "../users/Authentication.js"
import { FactorEffectiveness, FactorParams, FactorPath, FactorsResponse, RankingTable, TableParams } from "./Ranking.js"

export * from "./Ranking.js"

/** The factor library and the cross-sectional ranking of a venue's symbols: `/api/ranking/...`. */
export class RankingApi extends HttpApiGroup.make("ranking")
  .add(
    HttpApiEndpoint.get("factors", "/ranking/factors")
      .addSuccess(FactorsResponse)
      .annotate(
        OpenApi.Summary,
        "The built-in factors: id, key, category, whether higher is better, and the ta call programs use"
      )
  )
  .add(
    HttpApiEndpoint.get("table", "/ranking/table")
      .setUrlParams(TableParams)
      .addSuccess(RankingTable)
      .annotate(
        OpenApi.Summary,
        "Every listed symbol ranked on the chosen factors (z-scores winsorised at ±3, weighted)"
      )
  )
  .add(
    HttpApiEndpoint.get("factor", "/ranking/factors/:id")
      .setPath(FactorPath)
      .setUrlParams(FactorParams)
      .addSuccess(FactorEffectiveness)
      .addError(ApiError.NoFactorHistory)
      .annotate(
        OpenApi.Summary,
        "A factor (by key or id) and its information coefficient with the forward return over horizon bars"
      )
  )
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Ranking")
{}
