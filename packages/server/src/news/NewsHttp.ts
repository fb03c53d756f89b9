import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, News, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const NewsHttpLive = HttpApiBuilder.group(TradingApi, "news", (handlers) =>
  Effect.gen(function*() {
    const news = yield* News
    return handlers
      .handle("sources", () => Effect.flatMap(CurrentUser, (caller) => news.sources(caller)))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => news.create(caller, payload)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => news.update(caller, path.source_id, payload)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => news.remove(caller, path.source_id)))
      .handle("refresh", () => Effect.flatMap(CurrentUser, (caller) => news.refresh(caller)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => news.list(caller, urlParams)))
  }))
