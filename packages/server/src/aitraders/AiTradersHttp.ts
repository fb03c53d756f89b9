import { HttpApiBuilder } from "@effect/platform"
import { AiTraders, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const AiTradersHttpLive = HttpApiBuilder.group(TradingApi, "aitraders", (handlers) =>
  Effect.gen(function*() {
    const traders = yield* AiTraders
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => traders.get(caller, path.account_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => traders.update(caller, path.account_id, payload)))
      .handle("decide", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => traders.decideNow(caller, path.account_id)))
      .handle("promptVariables", () => Effect.succeed(traders.variables))
      .handle("decisions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          traders.list(caller, path.account_id, urlParams)))
  }))
