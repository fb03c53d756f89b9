import { HttpApiBuilder } from "@effect/platform"
import { Arena, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const ArenaHttpLive = HttpApiBuilder.group(TradingApi, "arena", (handlers) =>
  Effect.gen(function*() {
    const arena = yield* Arena
    return handlers
      .handle("checkPnlStatus", () => arena.status)
      .handle("pnl", () => Effect.flatMap(CurrentUser, (caller) => arena.pnl(caller)))
      .handle("leaderboard", ({ urlParams }) => arena.leaderboard(urlParams))
  }))
