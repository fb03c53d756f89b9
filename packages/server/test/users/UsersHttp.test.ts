import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { call, expectError, signUp, TestServer, uniqueUser } from "../support/TestServer.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`users and sessions over ${storage.name}`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/users/register answers 201 with the user and never the password", () =>
        Effect.gen(function*() {
          const user = uniqueUser()
          const reply = yield* call("POST", "/api/users/register", { body: user })
          expect(reply.status).toBe(201)
          expect(Object.keys(reply.body).sort()).toEqual(["created_at", "email", "id", "username"])
          expect(reply.body).toMatchObject({ email: user.email, username: user.username })
          expect(Number.isInteger(reply.body.id)).toBe(true)
          expect(new Date(reply.body.created_at).toISOString()).toBe(reply.body.created_at)
          expect(reply.text).not.toContain(user.password)
        }))

      it.effect("register with a taken email or username (any case) answers 409 conflict", () =>
        Effect.gen(function*() {
          const user = uniqueUser()
          expect((yield* call("POST", "/api/users/register", { body: user })).status).toBe(201)
          const sameEmail = yield* call("POST", "/api/users/register", {
            body: { ...uniqueUser(), email: user.email.toUpperCase() }
          })
          expectError(sameEmail, 409, "conflict")
          expect(sameEmail.body.error).toMatch(/email/i)
          const sameName = yield* call("POST", "/api/users/register", {
            body: { ...uniqueUser(), username: user.username.toUpperCase() }
          })
          expectError(sameName, 409, "conflict")
          expect(sameName.body.error).toMatch(/username/i)
        }))

      it.effect("register with invalid fields answers 400 invalid_input listing every field", () =>
        Effect.gen(function*() {
          const reply = yield* call("POST", "/api/users/register", {
            body: { email: "not-an-email", password: "short", username: "x!" }
          })
          expectError(reply, 400, "invalid_input")
          expect(reply.body.issues.map((i: { path: string }) => i.path).sort()).toEqual([
            "email",
            "password",
            "username"
          ])
        }))

      it.effect("register with a missing field or a wrong type answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const { email, password } = uniqueUser()
          expectError(yield* call("POST", "/api/users/register", { body: { email, password } }), 400, "invalid_input")
          expectError(
            yield* call("POST", "/api/users/register", { body: { email, password: 12345678, username: "abc" } }),
            400,
            "invalid_input"
          )
          expectError(yield* call("POST", "/api/users/register", { body: [1, 2] }), 400, "invalid_input")
        }))

      it.effect("login answers a bearer token valid for 180 days, with the user", () =>
        Effect.gen(function*() {
          const user = uniqueUser()
          yield* call("POST", "/api/users/register", { body: user })
          const reply = yield* call("POST", "/api/users/login", {
            body: { email: user.email, password: user.password }
          })
          expect(reply.status).toBe(200)
          expect(reply.body.token_type).toBe("bearer")
          expect(reply.body.session_token).toMatch(/^tps_[A-Za-z0-9_-]{43}$/)
          expect(reply.body.user).toMatchObject({ email: user.email, username: user.username })
          const now = yield* TestClock.currentTimeMillis
          expect(Date.parse(reply.body.expires_at) - now).toBe(180 * 24 * 3600 * 1000)
        }))

      it.effect("login with a wrong password or an unknown email answers the same 401 invalid_credentials", () =>
        Effect.gen(function*() {
          const user = uniqueUser()
          yield* call("POST", "/api/users/register", { body: user })
          const wrong = yield* call("POST", "/api/users/login", {
            body: { email: user.email, password: "wrong password" }
          })
          const unknown = yield* call("POST", "/api/users/login", {
            body: { email: "nobody@example.com", password: user.password }
          })
          expectError(wrong, 401, "unauthorized")
          expectError(unknown, 401, "unauthorized")
          expect(wrong.body.reason).toBe("invalid_credentials")
          expect(unknown.body.reason).toBe("invalid_credentials")
          expect(wrong.body.error).toBe(unknown.body.error)
        }))

      it.effect("GET /api/users/me accepts the bearer header (any case of the scheme) and ?session_token", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const viaHeader = yield* call("GET", "/api/users/me", { token: me.token })
          expect(viaHeader.status).toBe(200)
          expect(viaHeader.body).toMatchObject({ id: me.id, email: me.email, username: me.username })
          const lower = yield* call("GET", "/api/users/me", { headers: { authorization: `bearer ${me.token}` } })
          expect(lower.status).toBe(200)
          const viaQuery = yield* call("GET", `/api/users/me?session_token=${encodeURIComponent(me.token)}`)
          expect(viaQuery.body.id).toBe(me.id)
        }))

      it.effect("a missing, unknown or wrongly presented token answers 401 with its reason", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const missing = yield* call("GET", "/api/users/me")
          expectError(missing, 401, "unauthorized")
          expect(missing.body.reason).toBe("token_missing")
          const unknown = yield* call("GET", "/api/users/me", { token: "tps_not-a-real-token" })
          expect(unknown.body.reason).toBe("token_invalid")
          const basic = yield* call("GET", "/api/users/me", { headers: { authorization: `Basic ${me.token}` } })
          expectError(basic, 401, "unauthorized")
          expect(basic.body.reason).toBe("token_invalid")
          const noScheme = yield* call("GET", "/api/users/me", { headers: { authorization: me.token } })
          expect(noScheme.body.reason).toBe("token_invalid")
          // The header is preferred: a bad header is not rescued by a good query token.
          const badHeaderGoodQuery = yield* call("GET", `/api/users/me?session_token=${me.token}`, {
            token: "tps_wrong"
          })
          expect(badHeaderGoodQuery.status).toBe(401)
        }))

      it.effect("logout answers 204 and revokes only the presented token", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const second = yield* call("POST", "/api/users/login", { body: { email: me.email, password: me.password } })
          const out = yield* call("POST", "/api/users/logout", { token: me.token })
          expect(out.status).toBe(204)
          expect(out.text).toBe("")
          const after = yield* call("GET", "/api/users/me", { token: me.token })
          expectError(after, 401, "unauthorized")
          expect(after.body.reason).toBe("token_revoked")
          expect((yield* call("GET", "/api/users/me", { token: second.body.session_token })).status).toBe(200)
          expectError(yield* call("POST", "/api/users/logout"), 401, "unauthorized")
        }))

      it.effect("GET /api/users/sessions lists one row per active token, newest first, marking the current one", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          yield* TestClock.adjust("1 second")
          const second = yield* call("POST", "/api/users/login", {
            body: { email: me.email, password: me.password },
            headers: { "user-agent": "second-client/1.0" }
          })
          const reply = yield* call("GET", "/api/users/sessions", { token: me.token })
          expect(reply.status).toBe(200)
          expect(reply.body.sessions).toHaveLength(2)
          const [newest, oldest] = reply.body.sessions
          expect(newest).toMatchObject({ user_agent: "second-client/1.0", current: false })
          expect(oldest.current).toBe(true)
          expect(Object.keys(newest).sort()).toEqual([
            "created_at",
            "current",
            "expires_at",
            "id",
            "last_used_at",
            "user_agent"
          ])
          const paged = yield* call("GET", "/api/users/sessions?limit=1&offset=1", { token: second.body.session_token })
          expect(paged.body.sessions.map((s: { id: number }) => s.id)).toEqual([oldest.id])
          expectError(yield* call("GET", "/api/users/sessions?limit=0", { token: me.token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/users/sessions?limit=501", { token: me.token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/users/sessions"), 401, "unauthorized")
        }))

      it.effect("DELETE /api/users/sessions/:id revokes that token; another user's id is 403, an unknown id 404", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const other = yield* signUp()
          const second = yield* call("POST", "/api/users/login", { body: { email: me.email, password: me.password } })
          const sessions =
            (yield* call("GET", "/api/users/sessions", { token: second.body.session_token })).body.sessions
          const firstId = sessions.find((s: { current: boolean }) => !s.current).id
          const revoked = yield* call("DELETE", `/api/users/sessions/${firstId}`, { token: second.body.session_token })
          expect(revoked.status).toBe(204)
          expect((yield* call("GET", "/api/users/me", { token: me.token })).body.reason).toBe("token_revoked")
          const otherSessions = (yield* call("GET", "/api/users/sessions", { token: other.token })).body.sessions
          expectError(
            yield* call("DELETE", `/api/users/sessions/${otherSessions[0].id}`, { token: second.body.session_token }),
            403,
            "forbidden"
          )
          expect((yield* call("GET", "/api/users/me", { token: other.token })).status).toBe(200)
          expectError(yield* call("DELETE", "/api/users/sessions/99999999", { token: other.token }), 404, "not_found")
          expectError(yield* call("DELETE", "/api/users/sessions/abc", { token: other.token }), 400, "invalid_input")
          expectError(yield* call("DELETE", `/api/users/sessions/${firstId}`), 401, "unauthorized")
        }))

      it.effect("POST /api/users/password checks the current password, then revokes every token", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const second =
            (yield* call("POST", "/api/users/login", { body: { email: me.email, password: me.password } })).body
          const wrong = yield* call("POST", "/api/users/password", {
            token: me.token,
            body: { current_password: "not my password", new_password: "another good password" }
          })
          expectError(wrong, 401, "unauthorized")
          expect(wrong.body.reason).toBe("invalid_credentials")
          expectError(
            yield* call("POST", "/api/users/password", {
              token: me.token,
              body: { current_password: me.password, new_password: "short" }
            }),
            400,
            "invalid_input"
          )
          expect((yield* call("GET", "/api/users/me", { token: me.token })).status).toBe(200)
          const changed = yield* call("POST", "/api/users/password", {
            token: me.token,
            body: { current_password: me.password, new_password: "another good password" }
          })
          expect(changed.status).toBe(204)
          for (const token of [me.token, second.session_token]) {
            expect((yield* call("GET", "/api/users/me", { token })).body.reason).toBe("token_revoked")
          }
          expectError(
            yield* call("POST", "/api/users/login", { body: { email: me.email, password: me.password } }),
            401,
            "unauthorized"
          )
          const relogin = yield* call("POST", "/api/users/login", {
            body: { email: me.email, password: "another good password" }
          })
          expect(relogin.status).toBe(200)
          expectError(
            yield* call("POST", "/api/users/password", { body: { current_password: "x", new_password: "yyyyyyyy" } }),
            401,
            "unauthorized"
          )
        }))

      it.effect("GET /api/health answers without a token", () =>
        Effect.gen(function*() {
          const reply = yield* call("GET", "/api/health")
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ status: "ok", storage: storage.name })
          expect(reply.body.version).toMatch(/^\d+\.\d+\.\d+/)
        }))

      it.effect("a token expires after its lifetime and then answers 401 token_expired", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          yield* TestClock.adjust("179 days")
          expect((yield* call("GET", "/api/users/me", { token: me.token })).status).toBe(200)
          yield* TestClock.adjust("1 day")
          const expired = yield* call("GET", "/api/users/me", { token: me.token })
          expectError(expired, 401, "unauthorized")
          expect(expired.body.reason).toBe("token_expired")
          const sessions = yield* call("GET", "/api/users/sessions", { token: (yield* signUp()).token })
          expect(sessions.body.sessions).toHaveLength(1)
        }))
    })
  })
}
