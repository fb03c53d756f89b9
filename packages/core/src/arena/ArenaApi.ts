import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "../users/Authentication.js"
import { AccountPnlList, PnlRefreshStatus } from "./ArenaPnl.js"
import { Leaderboard, LeaderboardParams } from "./Leaderboard.js"

export * from "./ArenaPnl.js"
export { ArenaEquityPoint, Leaderboard, LeaderboardEntry, LeaderboardParams, LeaderboardWindow } from "./Leaderboard.js"

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
  .add(
    HttpApiEndpoint.get("leaderboard", "/arena/leaderboard")
      .setUrlParams(LeaderboardParams)
      .addSuccess(Leaderboard)
      .annotate(
        OpenApi.Description,
        "Every account on the dashboard (`show_on_dashboard`), of every user, ranked by its return over the window: " +
          "equity, return, drawdown, Sharpe, trades and win rate, with its hourly equity curve. AI and program traders " +
          "side by side. An account appears once the PnL refresher has measured it."
      )
      .annotate(OpenApi.Summary, "The arena's leaderboard over a window")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Arena")
{}
