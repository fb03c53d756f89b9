import { HttpApiBuilder } from "@effect/platform"
import { Rankings, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const RankingHttpLive = HttpApiBuilder.group(TradingApi, "ranking", (handlers) =>
  Effect.gen(function*() {
    const rankings = yield* Rankings
    return handlers
      .handle("factors", () => rankings.factors)
      .handle("table", ({ urlParams }) => rankings.table(urlParams))
      .handle("factor", ({ path, urlParams }) => rankings.factorEffectiveness(path.id, urlParams))
  }))
