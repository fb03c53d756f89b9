import { HttpApiBuilder } from "@effect/platform"
import { BiasChecks, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const BiasChecksHttpLive = HttpApiBuilder.group(TradingApi, "biasChecks", (handlers) =>
  Effect.gen(function*() {
    const checks = yield* BiasChecks
    return handlers
      .handle("submit", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => checks.submit(caller, path.id, payload)))
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          checks.list(caller, path.id, urlParams)))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          checks.get(caller, path.id, path.check_id)))
  }))
