import { describe, expect, layer } from "@effect/vitest"
import { PlatformConfig } from "@trading-platform/core"
import { testDatabaseUrl, testRedisUrl, testStorages } from "@trading-platform/core/testing"
import { Effect, Layer, Option, Redacted, TestClock } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { openSse, openSseWhenFree, StreamTestServer, until } from "../support/StreamClients.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url))

/** Another replica: the server's entry point in its own process, on the same database and Redis. */
const startReplica = (databaseUrl: string) => {
  const child = spawn(process.execPath, [
    "--import",
    "tsx",
    "--conditions=@trading-platform/source",
    main,
    "--port",
    "0"
  ], {
    env: {
      PATH: process.env["PATH"] ?? "",
      DATABASE_URL: databaseUrl,
      REDIS_URL: testRedisUrl!,
      SECRET_KEY: "test-secret-key-0123456789abcdef0123456789",
      SIGNAL_SAMPLER: "false",
      BACKTEST_CONCURRENCY: "0"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const base = until("the replica to listen", () => /Listening on (http:\/\/[\d.:]+)/.exec(output)?.[1], 60_000)
  return { child, base }
}

const available = testDatabaseUrl !== undefined && testRedisUrl !== undefined
if (!available) console.warn("stream leases across processes need TEST_DATABASE_URL and TEST_REDIS_URL: SKIPPED")

describe.runIf(available)("stream leases in Redis", () => {
  layer(
    StreamTestServer({
      storage: testStorages[1]!,
      config: { redisUrl: Option.some(Redacted.make(testRedisUrl ?? "")) }
    }).pipe(
      // Tokens must be valid on the replica's real clock too.
      Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now())))
    ),
    { timeout: "180 seconds" }
  )("across two processes", (it) => {
    it.effect(
      "one stream per token across replicas; a replica that dies frees its lease once it expires",
      () =>
        Effect.gen(function*() {
          const { storage } = yield* PlatformConfig
          if (storage.kind !== "postgres") throw new Error("expected PostgreSQL")
          const replica = startReplica(Redacted.value(storage.url))
          try {
            const other = yield* Effect.promise(() => replica.base)
            const user = yield* signUp("lease")
            const here = yield* openSse("?symbols=BTC", { token: user.token })
            yield* Effect.promise(() => here.next("snapshot"))
            const there = yield* openSse("?symbols=BTC", { token: user.token, base: other })
            expect(there.status).toBe(429)
            expect(there.body.code).toBe("rate_limited")
            expect(there.headers.get("retry-after")).toBe(String(there.body.retry_after))

            here.close()
            const held = yield* openSseWhenFree("?symbols=BTC", { token: user.token, base: other })
            expect(held.status).toBe(200)
            yield* Effect.promise(() => held.next("snapshot"))
            expectError(
              yield* call("GET", "/api/market-intelligence/stream?symbols=ETH", { token: user.token }),
              429,
              "rate_limited"
            )

            // The replica dies without releasing: its lease runs out (15 s) and the stream opens here.
            replica.child.kill("SIGKILL")
            // How soon is Redis's clock, not this test's: the wait's deadline is generous for a loaded machine.
            const freed = yield* openSseWhenFree("?symbols=BTC", { token: user.token, deadlineMs: 90_000 })
            expect(freed.status).toBe(200)
            freed.close()
          } finally {
            replica.child.kill("SIGKILL")
          }
        }),
      180_000
    )
  })
})
