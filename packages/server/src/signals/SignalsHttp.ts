import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, Signals, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const SignalsHttpLive = HttpApiBuilder.group(TradingApi, "signals", (handlers) =>
  Effect.gen(function*() {
    const signals = yield* Signals
    return handlers
      .handle("list", () => Effect.flatMap(CurrentUser, (caller) => signals.list(caller)))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => signals.create(caller, payload)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => signals.get(caller, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => signals.update(caller, path.id, payload)))
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => signals.remove(caller, path.id)))
      .handle("evaluate", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          signals.evaluate(caller, path.id, payload.symbol)))
      .handle("createPool", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => signals.createPool(caller, payload)))
      .handle("updatePool", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          signals.updatePool(caller, path.id, payload)))
      .handle("deletePool", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => signals.removePool(caller, path.id)))
      .handle(
        "triggers",
        ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => signals.triggers(caller, urlParams))
      )
      .handle("walletTrackingStatus", () => Effect.flatMap(CurrentUser, (caller) => signals.walletStatus(caller)))
      .handle("poolStatus", () => Effect.flatMap(CurrentUser, (caller) => signals.poolStatus(caller)))
  }))
