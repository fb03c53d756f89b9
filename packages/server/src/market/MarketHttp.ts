import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, MarketData, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const MarketHttpLive = HttpApiBuilder.group(TradingApi, "market", (handlers) =>
  Effect.gen(function*() {
    const market = yield* MarketData
    return handlers
      .handle("prices", ({ payload }) => market.prices(payload))
      .handle("klines", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => market.klines(caller, urlParams)))
      .handle("symbols", ({ urlParams }) => market.symbols(urlParams))
      .handle("query", ({ payload }) => market.query(payload))
  }))
