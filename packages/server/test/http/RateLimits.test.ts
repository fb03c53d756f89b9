import { describe, expect, it, layer } from "@effect/vitest"
import { rateLimitPolicyPerMinute } from "@trading-platform/core"
import { testOptions, testRedisUrl } from "@trading-platform/core/testing"
import { makeWebHandler } from "@trading-platform/server"
import { Duration, Effect, Option, Redacted, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { makeMemoryStore } from "../../src/http/RateLimitStore.js"
import { call, expectError, type Reply, TestServer, uniqueUser } from "../support/TestServer.js"

const limits = rateLimitPolicyPerMinute({ auth: 3, read: 3, write: 2 })

// Each test uses its own client IPs (the server trusts X-Forwarded-For here), so counts never mix.
let ipCounter = 0
const freshIp = () => `10.${process.pid % 250}.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`
const from = (ip: string, token?: string) => ({ headers: { "x-forwarded-for": ip }, ...(token ? { token } : {}) })

const signUpFrom = (ip: string) =>
  Effect.gen(function*() {
    const user = uniqueUser("rl")
    yield* call("POST", "/api/users/register", { body: user, ...from(ip) })
    const login = yield* call("POST", "/api/users/login", {
      body: { email: user.email, password: user.password },
      ...from(ip)
    })
    expect(login.status).toBe(200)
    return login.body.session_token as string
  })

const remaining = (reply: Reply) => Number(reply.headers.get("x-ratelimit-remaining"))

const expectLimited = (reply: Reply) => {
  expectError(reply, 429, "rate_limited")
  expect(reply.headers.get("x-ratelimit-remaining")).toBe("0")
  expect(Number.isInteger(reply.body.retry_after) && reply.body.retry_after >= 1).toBe(true)
  expect(reply.headers.get("retry-after")).toBe(String(reply.body.retry_after))
}

layer(TestServer({ config: { rateLimits: limits, trustProxy: true } }), { timeout: "120 seconds" })(
  "rate limits",
  (it) => {
    it.effect("login and register: the 4th request a minute from one IP answers 429 with Retry-After", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        const login = () =>
          call("POST", "/api/users/login", { body: { email: "x@example.com", password: "whatever1" }, ...from(ip) })
        const replies = [yield* login(), yield* login(), yield* login()]
        expect(replies.map((r) => r.status)).toEqual([401, 401, 401])
        expect(replies.map(remaining)).toEqual([2, 1, 0])
        const now = Math.floor((yield* TestClock.currentTimeMillis) / 1000)
        for (const r of replies) {
          expect(r.headers.get("x-ratelimit-limit")).toBe("3")
          expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(now)
        }
        const limited = yield* call("POST", "/api/users/register", { body: uniqueUser(), ...from(ip) })
        expectLimited(limited)
        expect(limited.body.retry_after).toBeLessThanOrEqual(60)
        // Another IP has its own count.
        expect(
          (yield* login().pipe(Effect.zipRight(call("POST", "/api/users/login", { body: {}, ...from(freshIp()) }))))
            .status
        ).toBe(400)
      }))

    it.effect("when the window has passed, requests are allowed again", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        for (let i = 0; i < 3; i++) yield* call("POST", "/api/users/login", { body: {}, ...from(ip) })
        const limited = yield* call("POST", "/api/users/login", { body: {}, ...from(ip) })
        expectLimited(limited)
        yield* TestClock.adjust(`${limited.body.retry_after} seconds`)
        expectError(yield* call("POST", "/api/users/login", { body: {}, ...from(ip) }), 400, "invalid_input")
      }))

    it.effect("reads are counted per token: one token from three IPs is limited on its 4th read", () =>
      Effect.gen(function*() {
        const token = yield* signUpFrom(freshIp())
        const [a, b, c] = [freshIp(), freshIp(), freshIp()]
        expect((yield* call("GET", "/api/users/me", from(a, token))).status).toBe(200)
        expect((yield* call("GET", "/api/users/me", from(a, token))).status).toBe(200)
        const third = yield* call("GET", "/api/users/me", from(b, token))
        expect(third.status).toBe(200)
        expect(remaining(third)).toBe(0) // the token's count, the more restrictive of the two
        expectLimited(yield* call("GET", "/api/users/me", from(c, token)))
        // bearer and ?session_token are the same token
        expectLimited(yield* call("GET", `/api/users/me?session_token=${token}`, from(freshIp())))
      }))

    it.effect("reads are counted per IP: two tokens from one IP share its count", () =>
      Effect.gen(function*() {
        const [t1, t2] = [yield* signUpFrom(freshIp()), yield* signUpFrom(freshIp())]
        const ip = freshIp()
        expect((yield* call("GET", "/api/users/me", from(ip, t1))).status).toBe(200)
        expect((yield* call("GET", "/api/users/me", from(ip, t1))).status).toBe(200)
        expect((yield* call("GET", "/api/users/me", from(ip, t2))).status).toBe(200)
        expectLimited(yield* call("GET", "/api/users/me", from(ip, t2)))
        expect((yield* call("GET", "/api/users/me", from(freshIp(), t2))).status).toBe(200)
      }))

    it.effect("writes have their own quota, separate from reads", () =>
      Effect.gen(function*() {
        const token = yield* signUpFrom(freshIp())
        const ip = freshIp()
        const change = () =>
          call("POST", "/api/users/password", {
            body: { current_password: "nope", new_password: "whatever123" },
            ...from(ip, token)
          })
        expectError(yield* change(), 401, "unauthorized")
        const second = yield* change()
        expect(second.headers.get("x-ratelimit-limit")).toBe("2")
        expectLimited(yield* change())
        expect((yield* call("GET", "/api/users/me", from(ip, token))).status).toBe(200)
      }))

    it.effect("requests with unknown tokens and to unknown routes are counted too", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        for (let i = 0; i < 3; i++) {
          expectError(yield* call("GET", "/api/users/me", from(ip, "tps_unknown")), 401, "unauthorized")
        }
        expectLimited(yield* call("GET", "/api/no/such/route", from(ip)))
      }))
  }
)

describe("memory store", () => {
  it.effect("evicts idle keys once their window has passed", () =>
    Effect.gen(function*() {
      const { size, store } = yield* makeMemoryStore
      for (let i = 0; i < 1000; i++) {
        yield* store.fixedWindow({ key: `ip:${i}`, tokens: 1, refillRate: Duration.seconds(1), limit: 10 })
      }
      expect(size()).toBe(1000)
      yield* TestClock.adjust("30 seconds")
      yield* store.fixedWindow({ key: "fresh", tokens: 1, refillRate: Duration.seconds(1), limit: 10 })
      expect(size()).toBe(1001) // not swept before a minute has passed
      yield* TestClock.adjust("31 seconds")
      yield* store.fixedWindow({ key: "fresh", tokens: 1, refillRate: Duration.seconds(1), limit: 10 })
      expect(size()).toBe(1)
    }))
})

describe.skipIf(!testRedisUrl)("Redis store", () => {
  const redisConfig = testOptions({ kind: "pglite", dataDir: "memory://" }, {
    rateLimits: limits,
    trustProxy: true,
    redisUrl: Option.some(Redacted.make(testRedisUrl ?? ""))
  })
  layer(TestServer({ config: redisConfig }), { timeout: "120 seconds" })("two replicas", (it) => {
    it.effect("share counts through Redis: the limit holds across both", () =>
      Effect.gen(function*() {
        const replica = makeWebHandler({ config: redisConfig })
        const ip = `192.0.2.${randomBytes(1)[0]! % 250}-${randomBytes(4).toString("hex")}`
        const viaReplica = () =>
          Effect.promise(() =>
            replica.handler(
              new Request("http://replica/api/users/login", {
                method: "POST",
                headers: { "content-type": "application/json", "x-forwarded-for": ip },
                body: "{}"
              })
            )
          )
        expect((yield* call("POST", "/api/users/login", { body: {}, ...from(ip) })).status).toBe(400)
        expect((yield* viaReplica()).status).toBe(400)
        expect((yield* call("POST", "/api/users/login", { body: {}, ...from(ip) })).status).toBe(400)
        const limited = yield* viaReplica()
        expect(limited.status).toBe(429)
        expect((yield* Effect.promise(() => limited.json())).code).toBe("rate_limited")
        yield* Effect.promise(() => replica.dispose())
      }))
  })
})

describe.skipIf(!testRedisUrl)("Redis store with a limit that does not divide the window", () => {
  // 60 000 ms / 7 is not whole milliseconds, which Redis' fixed-window script refuses; the window
  // is rounded up to fit, so the limit still holds instead of the store failing open.
  const sevenPerMinute = testOptions({ kind: "pglite", dataDir: "memory://" }, {
    rateLimits: rateLimitPolicyPerMinute({ auth: 7, read: 7, write: 7 }),
    trustProxy: true,
    redisUrl: Option.some(Redacted.make(testRedisUrl ?? ""))
  })
  layer(TestServer({ config: sevenPerMinute }), { timeout: "120 seconds" })("7 per minute", (it) => {
    it.effect("the 8th request is refused", () =>
      Effect.gen(function*() {
        const ip = `198.51.100.${randomBytes(1)[0]! % 250}-${randomBytes(4).toString("hex")}`
        for (let i = 0; i < 7; i++) {
          const reply = yield* call("POST", "/api/users/login", { body: {}, ...from(ip) })
          expect(reply.headers.get("x-ratelimit-remaining")).toBe(String(6 - i))
        }
        expectLimited(yield* call("POST", "/api/users/login", { body: {}, ...from(ip) }))
      }))
  })
})
