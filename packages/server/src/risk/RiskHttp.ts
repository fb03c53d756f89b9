import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, RiskSettings, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const RiskHttpLive = HttpApiBuilder.group(TradingApi, "risk", (handlers) =>
  Effect.gen(function*() {
    const risk = yield* RiskSettings
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => risk.get(caller, path.account_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => risk.update(caller, path.account_id, payload)))
      .handle("events", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          risk.events(caller, path.account_id, urlParams)))
  }))
