import { HttpApiBuilder } from "@effect/platform"
import { BacktestRobustness, Backtests, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const BacktestsHttpLive = HttpApiBuilder.group(TradingApi, "backtests", (handlers) =>
  Effect.gen(function*() {
    const backtests = yield* Backtests
    const robustness = yield* BacktestRobustness
    return handlers
      .handle("submit", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => backtests.submit(caller, path.id, payload)))
      .handle("history", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => backtests.history(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => backtests.get(caller, path.id)))
      .handle("trades", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          backtests.trades(caller, path.id, urlParams)))
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => backtests.cancel(caller, path.id)))
      .handle("robustness", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          robustness.report(caller, path.id, payload)))
  }))
