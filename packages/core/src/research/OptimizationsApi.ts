import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { ProgramId } from "../programs/Program.js"
import { ProgramPath } from "../programs/ProgramsApi.js"
import { Authentication } from "../users/Authentication.js"
import {
  Optimization,
  OptimizationId,
  OptimizationList,
  OptimizationRequest,
  OptimizationRobustnessReport,
  OptimizationRobustnessRequest,
  OptimizationTrials,
  TrialsParams
} from "./Optimization.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./Optimization.js"

const OptimizationPath = Schema.Struct({ id: idParam(ProgramId), optimization_id: idParam(OptimizationId) })

/** Parameter searches of the caller's programs as durable jobs: `/api/programs/{id}/optimizations...`. */
export class OptimizationsApi extends HttpApiGroup.make("optimizations")
  .add(
    HttpApiEndpoint.post("submit", "/programs/:id/optimizations")
      .setPath(ProgramPath)
      .setPayload(strictBody(OptimizationRequest))
      .addSuccess(Optimization, { status: 202 })
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.NoMarketData)
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.ProgramInvalid)
      .addError(ApiError.UnsupportedLanguage)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Description,
        "Queues a search of the program's declared parameters over one backtest's data and settings (the body of " +
          "POST /programs/{id}/backtest, whose `params` fix the parameters not searched): `grid` (every point; at most " +
          "`budget.trials` of them, 400 naming `space` otherwise), `random` or `tpe` (`budget.trials` points, seeded). " +
          "Each trial is a backtest run by the trial workers of any replica; trials that break a constraint have no " +
          "objective. With `walk_forward`, each fold searches its in-sample window and runs its best point on the " +
          "out-of-sample one. Counts against MAX_QUEUED_JOBS_PER_USER. Follow it with GET, the `stream` or the " +
          "WebSocket's `optimization:{id}` channel."
      )
      .annotate(OpenApi.Summary, "Optimise a program's parameters")
  )
  .add(
    HttpApiEndpoint.get("list", "/programs/:id/optimizations")
      .setPath(ProgramPath)
      .setUrlParams(Pagination)
      .addSuccess(OptimizationList)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "The program's optimisations, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/programs/:id/optimizations/:optimization_id")
      .setPath(OptimizationPath)
      .addSuccess(Optimization)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(
        OpenApi.Summary,
        "One optimisation: status, trials done, the best so far and, once finished, its result"
      )
  )
  .add(
    HttpApiEndpoint.get("trials", "/programs/:id/optimizations/:optimization_id/trials")
      .setPath(OptimizationPath)
      .setUrlParams(TrialsParams)
      .addSuccess(OptimizationTrials)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(
        OpenApi.Summary,
        "A page of the optimisation's trials, sorted by their order, the objective or a metric"
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/programs/:id/optimizations/:optimization_id/stream")
      .setPath(OptimizationPath)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(
        OpenApi.Description,
        "Server-Sent Events: a `progress` event (status, trials done and planned, the best so far) now and each time " +
          "it changes, ending after the final status."
      )
      .annotate(OpenApi.Summary, "The optimisation's progress, live")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/programs/:id/optimizations/:optimization_id/cancel")
      .setPath(OptimizationPath)
      .addSuccess(Optimization)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.Conflict)
      .annotate(OpenApi.Summary, "Cancel an unfinished optimisation and its trials (409 once it has finished)")
  )
  .add(
    HttpApiEndpoint.del("remove", "/programs/:id/optimizations/:optimization_id")
      .setPath(OptimizationPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "Delete an optimisation with its trials (a running one stops)")
  )
  .add(
    HttpApiEndpoint.post("robustness", "/programs/:id/optimizations/:optimization_id/robustness")
      .setPath(OptimizationPath)
      .setPayload(strictBody(OptimizationRobustnessRequest))
      .addSuccess(OptimizationRobustnessReport)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.Conflict)
      .annotate(
        OpenApi.Description,
        "Of a completed optimisation: Monte Carlo on its best point's trades (seeded, as for a backtest), and of the " +
          "search that chose that point (fold 0, or the last fold with walk-forward) the deflated Sharpe ratio given " +
          "its trials, the probability of backtest overfitting by combinatorially symmetric cross-validation over " +
          "`partitions` blocks of the trials' curves, and the objective along each parameter around the best point. " +
          "An optimisation that has not completed answers 409."
      )
      .annotate(OpenApi.Summary, "Robustness of an optimisation's best point and of its search")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Optimisations")
{}
