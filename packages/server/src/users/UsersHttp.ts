import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { CurrentUser, TradingApi, Users } from "@trading-platform/core"
import { Effect } from "effect"
import { noStore } from "../http/NoStore.js"

export const UsersHttpLive = HttpApiBuilder.group(TradingApi, "users", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    return handlers
      .handle("register", ({ payload }) => Effect.zipRight(noStore, users.register(payload)))
      .handle("login", ({ payload }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.zipRight(noStore, users.login(payload, request.headers["user-agent"]))))
      .handle("logout", () =>
        Effect.flatMap(CurrentUser, users.logout))
      .handle("changePassword", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          users.changePassword(caller, payload)))
      .handle("deleteMe", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          users.deleteMe(caller, payload)))
      .handle("me", () => Effect.flatMap(CurrentUser, users.me))
      .handle("sessions", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => users.sessions(caller, urlParams)))
      .handle("revokeSession", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          users.revokeSession(caller, path.id)))
  }))
