import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountPath } from "../accounts/Account.js"
import { ApiError } from "../http/Errors.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { AccountRisk, AccountRiskUpdate, RiskEventList } from "./Risk.js"

export * from "./Risk.js"

/** The risk firewall of an account: its limits, its mode and the log of its mode changes. */
export class RiskApi extends HttpApiGroup.make("risk")
  .add(
    HttpApiEndpoint.get("get", "/account/:account_id/risk")
      .setPath(AccountPath)
      .addSuccess(AccountRisk)
      .annotate(
        OpenApi.Description,
        "The mode (`active`, `reduce_only`, `paused`, `flatten`), the limits (null: none), and the equity they are " +
          "measured on: now (cash + margins + unrealised PnL at the venue's price), its peak, and since the UTC day began."
      )
      .annotate(OpenApi.Summary, "The account's risk firewall: mode, limits and equity")
  )
  .add(
    HttpApiEndpoint.put("update", "/account/:account_id/risk")
      .setPath(AccountPath)
      .setPayload(strictBody(AccountRiskUpdate))
      .addSuccess(AccountRisk)
      .annotate(
        OpenApi.Description,
        "Sets limits (an absent one is kept, null removes it) and/or the mode by hand. `resume_at` goes with `paused`. " +
          "`active` restarts the drawdown and the day's loss from the equity now; `flatten` closes every position, then pauses."
      )
      .annotate(OpenApi.Summary, "Set the account's risk limits or mode")
  )
  .add(
    HttpApiEndpoint.get("events", "/account/:account_id/risk/events")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(RiskEventList)
      .annotate(OpenApi.Summary, "The account's mode changes, newest first: by a rule or by hand, and why")
  )
  .addError(ApiError.Forbidden)
  .addError(ApiError.NotFound)
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Risk")
{}
