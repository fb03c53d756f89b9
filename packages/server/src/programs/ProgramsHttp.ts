import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, Programs, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const ProgramsHttpLive = HttpApiBuilder.group(TradingApi, "programs", (handlers) =>
  Effect.gen(function*() {
    const programs = yield* Programs
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => programs.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => programs.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => programs.get(caller, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => programs.update(caller, path.id, payload)))
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => programs.remove(caller, path.id)))
  }))
