import { expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { Duration, Effect, TestClock } from "effect"
import { call, signUp, TestServer } from "../support/TestServer.js"

const retention = { ...platformOptions().retention, purgeInterval: Duration.hours(1), sessions: Duration.days(1) }

/** The reason a token is refused for, polled (the purge runs in the background) until it is `want` or the deadline passes. */
const reasonBecomes = (token: string, want: string | undefined) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 60_000
    for (;;) {
      const reply = yield* call("GET", "/api/users/me", { token })
      const reason: string | undefined = reply.status === 200 ? undefined : reply.body.reason
      if (reason === want || Date.now() > deadline) return reason
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
  })

layer(TestServer({ config: { tokenTtl: Duration.days(2), retention } }), { timeout: "120 seconds" })(
  "the session purge",
  (it) => {
    it.effect("deletes sessions revoked or expired longer ago than SESSION_RETENTION_DAYS, and only those", () =>
      Effect.gen(function*() {
        const me = yield* signUp("purge")
        const login = () =>
          Effect.map(
            call("POST", "/api/users/login", { body: { email: me.email, password: me.password } }),
            (r) => r.body.session_token as string
          )
        const revoked = yield* login()
        expect((yield* call("POST", "/api/users/logout", { token: revoked })).status).toBe(204)

        // Within the retention a revoked token is still known as revoked.
        yield* TestClock.adjust("2 hours")
        expect(yield* reasonBecomes(revoked, "token_revoked")).toBe("token_revoked")

        // A day and a half later: the revoked session is gone, the live one is untouched.
        yield* TestClock.adjust("34 hours")
        expect(yield* reasonBecomes(revoked, "token_invalid")).toBe("token_invalid")
        expect(yield* reasonBecomes(me.token, undefined)).toBe(undefined)

        // Expired (after two days) but within the retention: still reported as expired; then purged.
        yield* TestClock.adjust("13 hours")
        expect(yield* reasonBecomes(me.token, "token_expired")).toBe("token_expired")
        yield* TestClock.adjust("1 day")
        expect(yield* reasonBecomes(me.token, "token_invalid")).toBe("token_invalid")
      }))
  }
)
