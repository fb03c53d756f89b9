import { HttpApiBuilder } from "@effect/platform"
import { AiBacktests, AiTraders, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const AiTradersHttpLive = HttpApiBuilder.group(TradingApi, "aitraders", (handlers) =>
  Effect.gen(function*() {
    const traders = yield* AiTraders
    const backtests = yield* AiBacktests
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => traders.get(caller, path.account_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => traders.update(caller, path.account_id, payload)))
      .handle("decide", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => traders.decideNow(caller, path.account_id)))
      .handle("backtest", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          backtests.submit(caller, path.account_id, payload)))
      .handle("backtestGet", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          backtests.get(caller, path.account_id, path.backtest_id)))
      .handle("backtestList", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          backtests.list(caller, path.account_id, urlParams)))
      .handle("backtestCancel", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          backtests.cancel(caller, path.account_id, path.backtest_id)))
      .handle("promptVariables", () =>
        Effect.succeed(traders.variables))
      .handle("decisions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          traders.list(caller, path.account_id, urlParams)))
  }))
