import { HttpApiBuilder } from "@effect/platform"
import { Bindings, CurrentUser, ManualOrders, Reconciliation, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const AutomationHttpLive = HttpApiBuilder.group(TradingApi, "automation", (handlers) =>
  Effect.gen(function*() {
    const bindings = yield* Bindings
    const manual = yield* ManualOrders
    const reconciliation = yield* Reconciliation
    return handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => bindings.create(caller, path.id, payload)))
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.list(caller, path.id, urlParams)))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.get(caller, path.id, path.binding_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.update(caller, path.id, path.binding_id, payload)))
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.remove(caller, path.id, path.binding_id)))
      .handle("run", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.runNow(caller, path.id, path.binding_id)))
      .handle("runs", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.listRuns(caller, path.id, path.binding_id, urlParams)))
      .handle("orders", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.listOrders(caller, path.account_id, urlParams)))
      .handle("placeOrder", ({ headers, path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          manual.place(caller, path.account_id, payload, headers["idempotency-key"])))
      .handle("positions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.listPositions(caller, path.account_id, urlParams)))
      .handle("funding", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          bindings.listFunding(caller, path.account_id, urlParams)))
      .handle("reconciliations", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          reconciliation.list(caller, path.account_id, urlParams)))
  }))
