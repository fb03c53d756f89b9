import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, Trader, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const TraderHttpLive = HttpApiBuilder.group(TradingApi, "trader", (handlers) =>
  Effect.gen(function*() {
    const trader = yield* Trader
    return handlers
      .handle("export", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => trader.exportHistory(caller, path.account_id)))
      .handle("preview", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          trader.preview(caller, path.account_id, payload)))
      .handle("import", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          trader.importHistory(caller, path.account_id, payload)))
  }))
