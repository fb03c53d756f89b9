import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountPath } from "../accounts/Account.js"
import { ApiError } from "../http/Errors.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { AiBacktest, AiBacktestList, AiBacktestPath, AiBacktestRequest, maxAiBacktestSlots } from "./AiBacktest.js"
import { AiTraderSettings, AiTraderUpdate, DecisionRound, DecisionRoundList } from "./AiTrader.js"
import { PromptVariables } from "./PromptTemplate.js"

export * from "./AiBacktest.js"
export * from "./AiTrader.js"
export * from "./PromptTemplate.js"

/** AI traders: an AI account's trading settings, its decision rounds on demand, and the decision log. */
export class AiTradersApi extends HttpApiGroup.make("aitraders")
  .add(
    HttpApiEndpoint.get("get", "/account/:account_id/ai-trader")
      .setPath(AccountPath)
      .addSuccess(AiTraderSettings)
      .annotate(OpenApi.Summary, "The AI account's trading settings (defaults until first set)")
  )
  .add(
    HttpApiEndpoint.put("update", "/account/:account_id/ai-trader")
      .setPath(AccountPath)
      .setPayload(strictBody(AiTraderUpdate))
      .addSuccess(AiTraderSettings)
      .addError(ApiError.SymbolNotListed)
      .annotate(
        OpenApi.Description,
        "Sets what the AI account trades and how often its model decides (`enabled`, `symbols`, `timeframe`, " +
          "`interval_minutes`), and its own limits on rounds per hour and tokens per day (null: the server's)."
      )
  )
  .add(
    HttpApiEndpoint.post("decide", "/account/:account_id/ai-trader/decide")
      .setPath(AccountPath)
      .addSuccess(DecisionRound, { status: 202 })
      .annotate(OpenApi.Summary, "Queues a decision round now, whatever the schedule; it shows in the decision log")
  )
  .add(
    HttpApiEndpoint.get("decisions", "/account/:account_id/decisions")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(DecisionRoundList)
      .annotate(
        OpenApi.Summary,
        "The account's decision rounds, newest first: the prompt, the model's answer, the decisions, the orders, " +
          "tokens, cost, latency and errors"
      )
  )
  .add(
    HttpApiEndpoint.post("backtest", "/account/:account_id/backtest")
      .setPath(AccountPath)
      .setPayload(strictBody(AiBacktestRequest))
      .addSuccess(AiBacktest, { status: 202 })
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.NoMarketData)
      .annotate(
        OpenApi.Summary,
        "Queue a backtest of the AI account over a past range; poll it with GET /account/{id}/backtests/{backtest_id}"
      )
      .annotate(
        OpenApi.Description,
        "The account's model decides at each slot from the history up to it, through the model-call cache: `model` " +
          "asks it only for prompts it has not answered before, at most `max_model_calls` times (then the run ends, " +
          "its results so far kept); `replay` asks no model (an uncached prompt holds). `end` after `start`, at most " +
          `${maxAiBacktestSlots} slots between them (400 naming \`end\`); a range with closed candles (422 ` +
          "`no_market_data`). At most MAX_QUEUED_JOBS_PER_USER queued or running (429)."
      )
  )
  .add(
    HttpApiEndpoint.get("backtestGet", "/account/:account_id/backtests/:backtest_id")
      .setPath(AiBacktestPath)
      .addSuccess(AiBacktest)
      .annotate(
        OpenApi.Summary,
        "One AI backtest: status and, once completed, metrics, trades, the equity curve, each slot's decisions and " +
          "the model calls made and cached"
      )
  )
  .add(
    HttpApiEndpoint.get("backtestList", "/account/:account_id/backtests")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(AiBacktestList)
      .annotate(OpenApi.Summary, "The AI account's backtests, newest first, without their results")
  )
  .add(
    HttpApiEndpoint.post("backtestCancel", "/account/:account_id/backtests/:backtest_id/cancel")
      .setPath(AiBacktestPath)
      .addSuccess(AiBacktest)
      .annotate(OpenApi.Summary, "Cancel a queued or running AI backtest; a finished one answers 409")
  )
  .add(
    HttpApiEndpoint.get("promptVariables", "/ai/prompt-variables")
      .addSuccess(PromptVariables)
      .annotate(
        OpenApi.Summary,
        "The variables an AI account's prompts may name ({positions}, {candles:BTC:1h:50}, …) and the default prompts"
      )
  )
  .addError(ApiError.Forbidden)
  .addError(ApiError.NotFound)
  .addError(ApiError.Conflict)
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "AI traders")
{}
