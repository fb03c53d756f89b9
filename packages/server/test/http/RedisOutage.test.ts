import { describe, expect, layer } from "@effect/vitest"
import { rateLimitPolicyPerMinute } from "@trading-platform/core"
import { testOptions, testRedisUrl } from "@trading-platform/core/testing"
import { Effect, Layer, Logger, Option, Redacted, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { probeInterval } from "../../src/http/RateLimitStore.js"
import { makeTcpProxy } from "../support/TcpProxy.js"
import { call, expectError, TestServer } from "../support/TestServer.js"

const limits = rateLimitPolicyPerMinute({ auth: 3, read: 3, write: 3 })

// Each test uses its own client IP (the server trusts X-Forwarded-For), so counts never mix with other tests on this Redis.
const freshIp = () => `203.0.113.${randomBytes(1)[0]! % 250}-${randomBytes(6).toString("hex")}`
const health = (ip: string) => call("GET", "/api/health", { headers: { "x-forwarded-for": ip } })

/** What the server logged, to count warnings. */
const logs: Array<string> = []
const CapturedLogs = Logger.add(Logger.make(({ logLevel, message }) => {
  logs.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
}))
const warnings = () => logs.filter((line) => line.startsWith("WARN") && line.includes("Rate-limit store unreachable"))

const unreachable = testOptions({ kind: "pglite", dataDir: "memory://" }, {
  rateLimits: limits,
  trustProxy: true,
  redisUrl: Option.some(Redacted.make("redis://127.0.0.1:1/0"))
})
layer(TestServer({ config: unreachable }).pipe(Layer.provide(CapturedLogs)), { timeout: "120 seconds" })(
  "Redis unreachable from the start",
  (it) => {
    it.effect("requests are counted per process: the limit still holds, with one warning for the whole outage", () =>
      Effect.gen(function*() {
        logs.length = 0
        const ip = freshIp()
        for (let i = 0; i < 3; i++) expect((yield* health(ip)).status).toBe(200)
        expectError(yield* health(ip), 429, "rate_limited")
        for (let i = 0; i < 5; i++) yield* health(freshIp())
        expect(warnings()).toHaveLength(1)
      }))
  }
)

describe.skipIf(!testRedisUrl)("Redis going away and coming back (through a proxy)", () => {
  const proxy = makeTcpProxy(new URL(testRedisUrl ?? "redis://x"), 6379)
  const ProxiedServer = Layer.unwrapEffect(Effect.gen(function*() {
    yield* Effect.promise(proxy.start)
    const url = new URL(testRedisUrl!)
    url.host = `127.0.0.1:${proxy.port()}`
    return TestServer({
      config: { rateLimits: limits, trustProxy: true, redisUrl: Option.some(Redacted.make(url.toString())) }
    })
  })).pipe(Layer.provide(CapturedLogs))

  layer(ProxiedServer, { timeout: "120 seconds" })("outage", (it) => {
    it.effect("limits fall back to this process with one warning, and go back to Redis when it returns", () =>
      Effect.gen(function*() {
        logs.length = 0
        const ip = freshIp()
        // Counted in Redis.
        expect((yield* health(ip)).headers.get("x-ratelimit-remaining")).toBe("2")

        yield* Effect.promise(proxy.stop)
        // Counted in this process from zero: the limit holds, and the outage is reported once.
        const during = freshIp()
        for (let i = 0; i < 3; i++) expect((yield* health(during)).status).toBe(200)
        expectError(yield* health(during), 429, "rate_limited")
        for (let i = 0; i < 5; i++) expect((yield* health(freshIp())).status).toBe(200)
        expect(warnings()).toHaveLength(1)

        yield* Effect.promise(proxy.start)
        yield* TestClock.adjust(probeInterval)
        // One request per probe interval tries Redis again (the proxy's reconnect takes a moment).
        const back = () => logs.some((line) => line.includes("Rate-limit store is back"))
        for (let i = 0; i < 40 && !back(); i++) {
          yield* TestClock.adjust(probeInterval)
          yield* health(freshIp())
          if (!back()) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 250)))
        }
        expect(back()).toBe(true)
        // Back on Redis: the count made there before the outage goes on.
        expect((yield* health(ip)).headers.get("x-ratelimit-remaining")).toBe("1")
        expect(warnings()).toHaveLength(1)
      }))
  })
})
