import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Authentication } from "../users/Authentication.js"
import { ProgramPerformance, ProgramPerformanceParams } from "./ProgramPerformance.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./ProgramPerformance.js"

/** Aggregates over the caller's data: `/api/analytics/...`. */
export class AnalyticsApi extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("programSummary", "/analytics/program-summary")
      .setUrlParams(ProgramPerformanceParams)
      .addSuccess(ProgramPerformance)
      .addError(ApiError.Forbidden)
      .annotate(
        OpenApi.Summary,
        "Live trades (or, with source=backtest, completed backtests) summed by program, symbol or account: trades, symbols traded, PnL and win rate (a fraction)"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Analytics")
{}
