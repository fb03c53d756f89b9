import { describe, expect, it } from "@effect/vitest"
import { testDatabaseUrl, testRedisUrl, testStorages } from "@trading-platform/core/testing"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { type Running, start, waitFor } from "../support/ServerProcess.js"
import { uniqueUser } from "../support/TestServer.js"

const listening = async (running: Running) => (await waitFor(running, /Listening on (http:\/\/[\d.:]+)/))[1]!

const readLimit = 5

// Every request comes "through the proxy" from its own client IP, so counts never mix with other tests on this Redis.
const send = async (base: string, ip: string, method: string, path: string, body?: unknown, token?: string) => {
  const headers: Record<string, string> = { "content-type": "application/json", "x-forwarded-for": ip }
  if (token) headers["authorization"] = `Bearer ${token}`
  const reply = await fetch(base + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await reply.text()
  return { status: reply.status, body: text === "" ? undefined : JSON.parse(text) }
}

const freshIp = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}-${randomBytes(6).toString("hex")}`

describe.skipIf(!testDatabaseUrl || !testRedisUrl)("two server processes on one PostgreSQL and one Redis", () => {
  it.scopedLive(
    "behave as one server: rate limits counted once, a revoked token or a changed password refused by the other",
    () =>
      Effect.gen(function*() {
        const storage = yield* testStorages[1]!.storage
        if (storage.kind !== "postgres") throw new Error("expected PostgreSQL")
        const env = {
          DATABASE_URL: Redacted.value(storage.url),
          REDIS_URL: testRedisUrl!,
          SECRET_KEY: "replica-test-secret-key-0123456789abcdef",
          TRUST_PROXY: "true",
          RATE_LIMIT_READ_PER_MIN: String(readLimit),
          BACKTEST_CONCURRENCY: "0"
        }
        const replicas = [start(["--port", "0"], env), start(["--port", "0"], env)]
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            for (const r of replicas) r.child.kill("SIGTERM")
            for (const r of replicas) expect(await r.exited).toBe(0)
          })
        )
        yield* Effect.promise(async () => {
          const [a, b] = await Promise.all(replicas.map(listening))
          const ip = freshIp()
          const user = uniqueUser("replica")
          expect((await send(a!, ip, "POST", "/api/users/register", user)).status).toBe(201)
          // One database: the same user cannot be registered again through the other.
          expect((await send(b!, ip, "POST", "/api/users/register", user)).body.code).toBe("conflict")
          const login = (base: string) =>
            send(base, freshIp(), "POST", "/api/users/login", { email: user.email, password: user.password }).then(
              (r) => {
                expect(r.status).toBe(200)
                return r.body.session_token as string
              }
            )

          // Rate limits: reads with one token, alternating between the replicas, from fresh IPs.
          const counted = await login(b!)
          const statuses: Array<number> = []
          for (let i = 0; i < 3 * readLimit; i++) {
            statuses.push(
              (await send(i % 2 === 0 ? a! : b!, freshIp(), "GET", "/api/users/me", undefined, counted)).status
            )
          }
          expect(statuses.filter((s) => s === 200)).toHaveLength(readLimit)
          expect(statuses.filter((s) => s === 429)).toHaveLength(2 * readLimit)

          // A token revoked on one replica is refused by the other on its next request.
          const [kept, revoked] = [await login(a!), await login(a!)]
          expect((await send(b!, freshIp(), "GET", "/api/users/me", undefined, revoked)).status).toBe(200)
          expect((await send(a!, freshIp(), "POST", "/api/users/logout", undefined, revoked)).status).toBe(204)
          const refused = await send(b!, freshIp(), "GET", "/api/users/me", undefined, revoked)
          expect({ status: refused.status, reason: refused.body.reason }).toEqual({
            status: 401,
            reason: "token_revoked"
          })

          // A password changed on one replica: the other refuses the old tokens and the old password.
          expect((await send(b!, freshIp(), "GET", "/api/users/me", undefined, kept)).status).toBe(200)
          const changed = await send(b!, freshIp(), "POST", "/api/users/password", {
            current_password: user.password,
            new_password: "a new long password"
          }, kept)
          expect(changed.status).toBe(204)
          expect((await send(a!, freshIp(), "GET", "/api/users/me", undefined, kept)).status).toBe(401)
          expect(
            (await send(a!, freshIp(), "POST", "/api/users/login", { email: user.email, password: user.password }))
              .status
          ).toBe(401)
          expect(
            (await send(a!, freshIp(), "POST", "/api/users/login", {
              email: user.email,
              password: "a new long password"
            })).status
          ).toBe(200)
        })
      }),
    180_000
  )
})
