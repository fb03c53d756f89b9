import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, StorageStats, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const StorageStatsHttpLive = HttpApiBuilder.group(
  TradingApi,
  "storageStats",
  (handlers) =>
    Effect.map(StorageStats, (stats) => handlers.handle("read", () => Effect.flatMap(CurrentUser, stats.read)))
)
