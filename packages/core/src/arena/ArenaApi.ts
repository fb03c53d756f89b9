import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "../users/Authentication.js"
import { AccountPnlList, PnlRefreshStatus } from "./ArenaPnl.js"

export * from "./ArenaPnl.js"

/** Arena PnL: `/api/arena/...`. */
export class ArenaApi extends HttpApiGroup.make("arena")
  .add(
    HttpApiEndpoint.get("checkPnlStatus", "/arena/check-pnl-status")
      .addSuccess(PnlRefreshStatus)
      .annotate(OpenApi.Summary, "Whether PnL refreshes keep up: ok, degraded or error, with the reason when not ok")
  )
  .add(
    HttpApiEndpoint.get("pnl", "/arena/pnl")
      .addSuccess(AccountPnlList)
      .annotate(OpenApi.Summary, "The caller's accounts' realised and unrealised PnL as of the last refresh")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Arena")
{}
