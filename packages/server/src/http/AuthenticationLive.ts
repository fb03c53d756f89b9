import { HttpServerRequest } from "@effect/platform"
import { Authentication, type CurrentUserShape, Unauthorized, Users } from "@trading-platform/core"
import { Effect, Exit, Layer } from "effect"
import { type PresentedToken, presentedToken } from "./PresentedToken.js"

/** The caller a presented token names, or why there is none. */
export const authenticatePresented = (users: Users, presented: PresentedToken) => {
  switch (presented._tag) {
    case "None":
      return Effect.fail(new Unauthorized({ error: "A session token is required", reason: "token_missing" }))
    case "Malformed":
      return Effect.fail(
        new Unauthorized({ error: "Authorization must be 'Bearer <session token>'", reason: "token_invalid" })
      )
    case "Token":
      return users.authenticate(presented.token)
  }
}

/**
 * Both security schemes read the request themselves, so the header wins over the query
 * parameter, the scheme is checked, and a failure names its reason. HttpApi tries the second
 * scheme whenever the first fails; the outcome is kept per request so a bad token is looked up once.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const users = yield* Users
    const outcomes = new WeakMap<HttpServerRequest.HttpServerRequest, Exit.Exit<CurrentUserShape, Unauthorized>>()

    const authenticate = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      outcomes.get(request) ??
        Effect.flatten(
          Effect.tap(Effect.exit(authenticatePresented(users, presentedToken(request))), (outcome) =>
            Effect.sync(() => outcomes.set(request, outcome)))
        ))

    return { bearer: () => authenticate, sessionToken: () => authenticate }
  })
)
