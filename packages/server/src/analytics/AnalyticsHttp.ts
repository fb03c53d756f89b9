import { HttpApiBuilder } from "@effect/platform"
import { Analytics, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const AnalyticsHttpLive = HttpApiBuilder.group(TradingApi, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* Analytics
    return handlers.handle(
      "programSummary",
      ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => analytics.programSummary(caller, urlParams))
    )
  }))
