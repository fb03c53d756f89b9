import { describe, expect, layer } from "@effect/vitest"
import { PlatformLive, rateLimitPolicyPerMinute, Users } from "@trading-platform/core"
import { TestConfig, testStorages } from "@trading-platform/core/testing"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ApiLive } from "../../src/ApiLive.js"
import { FastLane } from "../../src/http/FastLane.js"
import { call, expectError, type Reply, signUp, TestServer, uniqueUser } from "../support/TestServer.js"

const limits = rateLimitPolicyPerMinute({ auth: 100, read: 6, write: 100 })

/** What the lane leaves to the platform answers this status on the lane-only server. */
const leftToPlatform = 599

class LaneBase extends Context.Tag("test/LaneBase")<LaneBase, string>() {}

/** The lane alone on a `node:http` server, over the platform's services. */
const LaneServer = Layer.scoped(
  LaneBase,
  Effect.gen(function*() {
    const lane = yield* FastLane
    const server = createServer((request, response) => {
      if (!lane.answer(request, response)) response.writeHead(leftToPlatform).end()
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
).pipe(
  Layer.provide(FastLane.Default),
  Layer.provideMerge(ApiLive),
  Layer.provideMerge(PlatformLive),
  Layer.provide(TestConfig(testStorages[0]!, { rateLimits: limits, trustProxy: true }))
)

// Each test asks from its own client IP (trusted from X-Forwarded-For), so limits never mix.
let ipCounter = 0
const freshIp = () => `10.1.0.${++ipCounter}`

const ask = (ip: string, path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  Effect.flatMap(LaneBase, (base) =>
    Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(base + path, { ...init, headers: { ...init.headers, "x-forwarded-for": ip } })
      const text = await response.text()
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text }
    }))

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A new user's session token, from the services. */
const sessionToken = Effect.gen(function*() {
  const users = yield* Users
  const user = uniqueUser("lane")
  yield* users.register(user)
  return (yield* users.login({ email: user.email, password: user.password }, undefined)).session_token
})

describe("fast lane", () => {
  layer(LaneServer, { timeout: "60 seconds" })("the lane alone", (it) => {
    it.effect("takes only a GET of /api/users/me without a body or an Origin", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        const token = yield* sessionToken
        expect((yield* ask(ip, "/api/users/me", { headers: bearer(token) })).status).toBe(200)
        expect((yield* ask(ip, "/api/users/me?x=1", { headers: bearer(token) })).status).toBe(200)
        for (
          const [path, init] of [
            ["/api/users/me", { method: "POST", headers: bearer(token) }],
            ["/api/users/me", { method: "DELETE", headers: bearer(token) }],
            ["/api/users/me", { headers: { ...bearer(token), origin: "https://app.example.com" } }],
            ["/api/users/me/", { headers: bearer(token) }],
            ["/api/users/mee", { headers: bearer(token) }],
            ["/api/health", {}]
          ] as const
        ) expect((yield* ask(ip, path, init)).status).toBe(leftToPlatform)
      }))

    it.effect("answers the caller as the contract encodes it, with the request id and rate-limit headers", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        const users = yield* Users
        const user = uniqueUser("lane")
        const registered = yield* users.register(user)
        const { session_token } = yield* users.login({ email: user.email, password: user.password }, undefined)
        const reply = yield* ask(ip, "/api/users/me", {
          headers: { ...bearer(session_token), "x-request-id": "lane-1" }
        })
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          id: registered.id,
          email: user.email,
          username: user.username,
          created_at: registered.created_at
        })
        expect(reply.headers.get("content-type")).toBe("application/json")
        expect(reply.headers.get("content-length")).toBe(String(Buffer.byteLength(reply.text)))
        expect(reply.headers.get("x-request-id")).toBe("lane-1")
        expect(reply.headers.get("x-ratelimit-limit")).toBe("6")
        // The legacy query parameter, and an invalid request id replaced by a new one.
        const query = yield* ask(ip, `/api/users/me?session_token=${session_token}`, {
          headers: { "x-request-id": "a b" }
        })
        expect(query.status).toBe(200)
        expect(query.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      }))

    it.effect("refuses a missing, malformed, unknown or revoked token with the envelope", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        const token = yield* sessionToken
        const reasons = []
        for (
          const headers of [{}, { authorization: `Basic ${token}` }, bearer("tps_unknown"), bearer("")] as const
        ) {
          const reply = yield* ask(ip, "/api/users/me", { headers })
          expectError(reply, 401, "unauthorized")
          reasons.push(reply.body.reason)
        }
        expect(reasons).toEqual(["token_missing", "token_invalid", "token_invalid", "token_invalid"])
        const users = yield* Users
        yield* users.logout(yield* users.authenticate(token))
        const revoked = yield* ask(ip, "/api/users/me", { headers: bearer(token) })
        expectError(revoked, 401, "unauthorized")
        expect(revoked.body.reason).toBe("token_revoked")
      }))

    it.effect("counts against the read limit and answers 429 with Retry-After past it", () =>
      Effect.gen(function*() {
        const ip = freshIp()
        const token = yield* sessionToken
        const replies: Array<Reply> = []
        for (let i = 0; i < 7; i++) replies.push(yield* ask(ip, "/api/users/me", { headers: bearer(token) }))
        const limited = replies.at(-1)!
        expect(replies.slice(0, -1).every((r) => r.status === 200)).toBe(true)
        expectError(limited, 429, "rate_limited")
        expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
        expect(limited.headers.get("retry-after")).toBe(String(limited.body.retry_after))
      }))
  })

  // On the reference server the lane is in front of the platform; an Origin header (CORS is off
  // here) sends the same request down the full path, so both answers can be compared.
  layer(TestServer({ config: { rateLimits: limits, trustProxy: true } }), { timeout: "60 seconds" })(
    "the lane and the full path",
    (it) => {
      const viaPlatform = { origin: "https://app.example.com" }
      // The same answer but for the request id and one more request counted.
      const comparable = (reply: Reply) => ({
        status: reply.status,
        body: reply.body.request_id === undefined ? reply.body : {
          ...reply.body,
          request_id: reply.body.request_id === reply.headers.get("x-request-id") ? "the header's" : "another"
        },
        headers: ["content-type", "content-length", "x-ratelimit-limit", "retry-after"].map((h) => reply.headers.get(h))
      })

      it.effect("answer alike, and count against the same limits", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("lane")
          let ip = 0
          for (
            const headers of [bearer(token), {}, { authorization: "Basic x" }, bearer("tps_unknown")] as Array<
              Record<string, string>
            >
          ) {
            const from = { ...headers, "x-forwarded-for": `10.9.8.${++ip}` }
            const lane = yield* call("GET", "/api/users/me", { headers: from })
            const full = yield* call("GET", "/api/users/me", { headers: { ...from, ...viaPlatform } })
            expect(comparable(lane)).toEqual(comparable(full))
            expect([lane.headers.get("x-ratelimit-remaining"), full.headers.get("x-ratelimit-remaining")])
              .toEqual(["5", "4"])
          }
          // Past the limit both refuse alike, whichever path counted the requests before.
          const from = { ...bearer(token), "x-forwarded-for": "10.9.8.100" }
          for (let i = 0; i < 3; i++) {
            yield* call("GET", "/api/users/me", { headers: from })
            yield* call("GET", "/api/users/me", { headers: { ...from, ...viaPlatform } })
          }
          // (Retry-After may differ by a second between the two.)
          const refusal = (reply: Reply) => ({
            status: reply.status,
            code: reply.body.code,
            retry: reply.headers.get("retry-after") === String(reply.body.retry_after)
          })
          const lane = yield* call("GET", "/api/users/me", { headers: from })
          const full = yield* call("GET", "/api/users/me", { headers: { ...from, ...viaPlatform } })
          expect(refusal(lane)).toEqual({ status: 429, code: "rate_limited", retry: true })
          expect(refusal(full)).toEqual(refusal(lane))
        }))
    }
  )
})
