import { HttpApiBuilder } from "@effect/platform"
import { Accounts, CurrentUser, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"

export const AccountsHttpLive = HttpApiBuilder.group(TradingApi, "accounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => accounts.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => accounts.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentUser, (caller) => accounts.get(caller, path.account_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => accounts.update(caller, path.account_id, payload)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => accounts.remove(caller, path.account_id)))
  }))
