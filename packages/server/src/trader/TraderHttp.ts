import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CurrentUser, Trader, TradingApi } from "@trading-platform/core"
import { Effect, Stream } from "effect"

export const TraderHttpLive = HttpApiBuilder.group(TradingApi, "trader", (handlers) =>
  Effect.gen(function*() {
    const trader = yield* Trader
    return handlers
      // Written as it is read, page by page; the body is the contract's `TraderExport`.
      .handle("export", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          trader.exportHistory(caller, path.account_id)).pipe(
            Effect.map((document) =>
              HttpServerResponse.stream(Stream.encodeText(document), { contentType: "application/json" })
            )
          ))
      .handle("preview", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          trader.preview(caller, path.account_id, payload)))
      .handle("import", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          trader.importHistory(caller, path.account_id, payload)))
  }))
