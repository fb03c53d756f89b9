import { describe, expect, layer } from "@effect/vitest"
import { rateLimitPolicyPerMinute } from "@trading-platform/core"
import { testOptions, testRedisUrl } from "@trading-platform/core/testing"
import { makeWebHandler } from "@trading-platform/server"
import { Effect, Option, Redacted, TestClock } from "effect"
import { call, expectError, type Reply, TestServer, uniqueUser } from "../support/TestServer.js"

// 10 logins a minute per IP, as by default; the server trusts X-Forwarded-For, so each test picks its IPs.
const limits = rateLimitPolicyPerMinute({ auth: 10, read: 1000, write: 1000 })

let ipCounter = 0
const freshIp = () => `10.${process.pid % 250}.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`
const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } })

/** A new user and a session token, each request from an IP of its own. */
const signUp = (label: string) =>
  Effect.gen(function*() {
    const user = uniqueUser(label)
    expect((yield* call("POST", "/api/users/register", { body: user, ...from(freshIp()) })).status).toBe(201)
    const login = yield* call("POST", "/api/users/login", {
      body: { email: user.email, password: user.password },
      ...from(freshIp())
    })
    expect(login.status).toBe(200)
    return { ...user, token: login.body.session_token as string }
  })

const expectWait = (reply: Reply, seconds: number) => {
  expectError(reply, 429, "rate_limited")
  expect(reply.body.retry_after).toBe(seconds)
  expect(reply.headers.get("retry-after")).toBe(String(seconds))
}

layer(TestServer({ config: { rateLimits: limits, trustProxy: true } }), { timeout: "120 seconds" })(
  "login limits",
  (it) => {
    for (
      const path of [
        "/api/users/login/",
        "//api/users/login",
        "/API/users/login",
        "/api/users/%6cogin",
        "/api/users//Login/?x=1"
      ]
    ) {
      it.effect(`POST ${path} reaches the login and counts as one: the 11th in a minute from one IP answers 429`, () =>
        Effect.gen(function*() {
          const ip = freshIp()
          // A different unknown account each time, so only the IP's count can refuse.
          const attempt = () =>
            call("POST", path, { body: { email: uniqueUser().email, password: "not the password" }, ...from(ip) })
          for (let i = 0; i < 10; i++) {
            const reply = yield* attempt()
            expectError(reply, 401, "unauthorized")
            expect(reply.headers.get("x-ratelimit-limit")).toBe("10")
          }
          const limited = yield* attempt()
          expectError(limited, 429, "rate_limited")
          expect(limited.headers.get("retry-after")).toMatch(/^\d+$/)
          // The canonical path shares the count.
          expectError(
            yield* call("POST", "/api/users/login", { body: { email: "a@example.com", password: "x" }, ...from(ip) }),
            429,
            "rate_limited"
          )
        }))
    }

    it.effect(
      "failed logins of one account from different IPs: after 5 every attempt waits 1 s, then 2 s, then 4 s (429, Retry-After); then the right password logs in",
      () =>
        Effect.gen(function*() {
          const user = yield* signUp("acct")
          const login = (password: string) =>
            call("POST", "/api/users/login", { body: { email: user.email, password }, ...from(freshIp()) })
          for (let i = 0; i < 5; i++) expectError(yield* login("wrong password"), 401, "unauthorized")
          expectWait(yield* login("wrong password"), 1)
          // While it waits, not even the right password is tried.
          expectWait(yield* login(user.password), 1)
          // The same account in another case is the same account; another account is not held up.
          expectWait(
            yield* call("POST", "/api/users/login", {
              body: { email: user.email.toUpperCase(), password: user.password },
              ...from(freshIp())
            }),
            1
          )
          const other = yield* signUp("other")
          expect(
            (yield* call("POST", "/api/users/login", {
              body: { email: other.email, password: other.password },
              ...from(freshIp())
            })).status
          ).toBe(200)

          yield* TestClock.adjust("1 second")
          expectError(yield* login("wrong password"), 401, "unauthorized")
          expectWait(yield* login(user.password), 2)
          yield* TestClock.adjust("2 seconds")
          expectError(yield* login("wrong password"), 401, "unauthorized")
          expectWait(yield* login(user.password), 4)
          yield* TestClock.adjust("3 seconds")
          expectWait(yield* login(user.password), 1)
          yield* TestClock.adjust("1 second")
          const ok = yield* login(user.password)
          expect(ok.status).toBe(200)
          expect((yield* call("GET", "/api/users/me", { token: ok.body.session_token })).body.email).toBe(user.email)
          // A success starts the count again: the next failures answer 401 until the 5th.
          for (let i = 0; i < 5; i++) expectError(yield* login("wrong password"), 401, "unauthorized")
          expectWait(yield* login(user.password), 1)
        })
    )

    it.effect("an unknown account is held up the same way, so a wait does not tell whether it exists", () =>
      Effect.gen(function*() {
        const email = uniqueUser().email
        const login = () =>
          call("POST", "/api/users/login", { body: { email, password: "not the password" }, ...from(freshIp()) })
        for (let i = 0; i < 5; i++) expectError(yield* login(), 401, "unauthorized")
        expectWait(yield* login(), 1)
      }))

    it.effect("register refuses a 9-character password and a common one with 400 naming the field", () =>
      Effect.gen(function*() {
        for (const password of ["ninechars", "Basketball", "1234567890"]) {
          const reply = yield* call("POST", "/api/users/register", {
            body: { ...uniqueUser(), password },
            ...from(freshIp())
          })
          expectError(reply, 400, "invalid_input")
          expect(reply.body.issues.map((i: { path: string }) => i.path)).toEqual(["password"])
          expect(reply.body.error).toContain("password")
        }
        const tenChars = yield* call("POST", "/api/users/register", {
          body: { ...uniqueUser(), password: "ten chars!" },
          ...from(freshIp())
        })
        expect(tenChars.status).toBe(201)
      }))

    it.effect("a password change refuses a short or common new password with 400 naming new_password", () =>
      Effect.gen(function*() {
        const me = yield* signUp("change")
        for (const new_password of ["ninechars", "qwertyuiop"]) {
          const reply = yield* call("POST", "/api/users/password", {
            token: me.token,
            body: { current_password: me.password, new_password }
          })
          expectError(reply, 400, "invalid_input")
          expect(reply.body.issues.map((i: { path: string }) => i.path)).toEqual(["new_password"])
        }
        expect((yield* call("GET", "/api/users/me", { token: me.token })).status).toBe(200)
      }))
  }
)

describe.skipIf(!testRedisUrl)("failed logins on Redis", () => {
  // A first wait of a minute, so the wall clock Redis times it on cannot end it during the test.
  const redisConfig = testOptions({ kind: "pglite", dataDir: "memory://" }, {
    rateLimits: { ...limits, login_failures: { ...limits.login_failures, first_delay_ms: 60_000 } },
    trustProxy: true,
    redisUrl: Option.some(Redacted.make(testRedisUrl ?? ""))
  })
  layer(TestServer({ config: redisConfig }), { timeout: "120 seconds" })("two replicas", (it) => {
    it.effect("count one account's failures together: 3 here and 2 there, and the 6th, on either, answers 429", () =>
      Effect.gen(function*() {
        const replica = makeWebHandler({ config: redisConfig })
        const email = uniqueUser("redis").email
        const viaReplica = () =>
          Effect.promise(async () => {
            const response = await replica.handler(
              new Request("http://replica/api/users/login", {
                method: "POST",
                headers: { "content-type": "application/json", "x-forwarded-for": freshIp() },
                body: JSON.stringify({ email, password: "not the password" })
              })
            )
            return { status: response.status, retryAfter: response.headers.get("retry-after") }
          })
        const here = () =>
          call("POST", "/api/users/login", { body: { email, password: "not the password" }, ...from(freshIp()) })
        for (let i = 0; i < 3; i++) expectError(yield* here(), 401, "unauthorized")
        for (let i = 0; i < 2; i++) expect((yield* viaReplica()).status).toBe(401)
        const limited = yield* here()
        expectError(limited, 429, "rate_limited")
        expect(limited.body.retry_after).toBeGreaterThan(50)
        expect(limited.body.retry_after).toBeLessThanOrEqual(60)
        const there = yield* viaReplica()
        expect(there.status).toBe(429)
        expect(Number(there.retryAfter)).toBeLessThanOrEqual(limited.body.retry_after)
        yield* Effect.promise(() => replica.dispose())
      }))
  })
})
