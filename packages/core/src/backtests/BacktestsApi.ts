import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { ProgramPath } from "../programs/ProgramsApi.js"
import { Authentication } from "../users/Authentication.js"
import {
  Backtest,
  BacktestHistory,
  BacktestHistoryParams,
  BacktestId,
  BacktestRequest,
  BacktestTrades,
  maxBacktestBars
} from "./Backtest.js"
import { BacktestRobustnessReport, RobustnessRequest } from "./RobustnessSchemas.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./Backtest.js"
export * from "./RobustnessSchemas.js"

const BacktestPath = Schema.Struct({ id: idParam(BacktestId) })

/** Backtests of the caller's programs, run as durable jobs: `/api/programs/.../backtest...`. */
export class BacktestsApi extends HttpApiGroup.make("backtests")
  .add(
    HttpApiEndpoint.post("submit", "/programs/:id/backtest")
      .setPath(ProgramPath)
      .setPayload(strictBody(BacktestRequest))
      .addError(ApiError.SymbolNotListed)
      .addSuccess(Backtest, { status: 202 })
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.NoMarketData)
      .addError(ApiError.ProgramInvalid)
      .addError(ApiError.UnsupportedLanguage)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Description,
        `Checked across fields: \`end\` after \`start\`, at most ${maxBacktestBars} bars of the timeframe between ` +
          "them (400 naming `end`), a range with closed candles (422 `no_market_data`), and a leverage within the " +
          "symbol's cap (422 `leverage_too_high`). At most MAX_QUEUED_JOBS_PER_USER backtests queued or running (429)."
      )
      .annotate(
        OpenApi.Summary,
        "Queue a backtest of the program over a symbol's candles; poll it with GET /programs/backtest/{id}"
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/programs/backtest/history")
      .setUrlParams(BacktestHistoryParams)
      .addSuccess(BacktestHistory)
      .addError(ApiError.Forbidden)
      .annotate(OpenApi.Summary, "The caller's backtests, newest first, filtered by program, account and status")
  )
  .add(
    HttpApiEndpoint.get("get", "/programs/backtest/:id")
      .setPath(BacktestPath)
      .addSuccess(Backtest)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "One backtest: status, progress and, once completed, metrics, equity curve and trades")
  )
  .add(
    HttpApiEndpoint.get("trades", "/programs/backtest/:id/trades")
      .setPath(BacktestPath)
      .setUrlParams(Pagination)
      .addSuccess(BacktestTrades)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "A page of one backtest's trades, oldest first, with their total")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/programs/backtest/:id/cancel")
      .setPath(BacktestPath)
      .addSuccess(Backtest)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.Conflict)
      .annotate(OpenApi.Summary, "Cancel a queued or running backtest; a finished one answers 409")
  )
  .add(
    HttpApiEndpoint.post("robustness", "/programs/backtest/:id/robustness")
      .setPath(BacktestPath)
      .setPayload(strictBody(RobustnessRequest))
      .addSuccess(BacktestRobustnessReport)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.Conflict)
      .annotate(
        OpenApi.Description,
        "Monte Carlo on the trades (seeded: the same request gives the same figures) and the deflated Sharpe ratio " +
          "of the stored equity curve's returns given `trials`. `trials` above 1 requires `trials_sharpe_variance` " +
          "(400 naming it). A backtest that has not completed answers 409."
      )
      .annotate(
        OpenApi.Summary,
        "Robustness figures of a completed backtest: Monte Carlo and the deflated Sharpe ratio"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Backtests")
{}
