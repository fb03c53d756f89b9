import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { PlatformConfig, PlatformLive, Users } from "@trading-platform/core"
import { TestConfig, testDatabaseUrl, testStorages } from "@trading-platform/core/testing"
import { ApiLive, requestContext } from "@trading-platform/server"
import { Effect, FastCheck, Layer, Redacted } from "effect"
import { createServer as createHttpServer, request as httpRequest } from "node:http"
import { makeTcpProxy } from "../support/TcpProxy.js"
import { baseUrl, call, expectError, signUp, TestServer } from "../support/TestServer.js"

const mib = 1024 * 1024

/**
 * POSTs a body with node:http, which reports the answer even when the server answers before the
 * whole body is sent (fetch fails the request then). `declared` sends Content-Length, else chunks.
 */
const postRaw = (path: string, body: string, declared: boolean) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.async<{ status: number; body: any }>((resume) => {
      const headers: Record<string, string | number> = { "content-type": "application/json" }
      if (declared) headers["content-length"] = Buffer.byteLength(body)
      const request = httpRequest(`${base}${path}`, { method: "POST", headers }, (response) => {
        let text = ""
        response.on("data", (chunk) => (text += chunk))
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body: JSON.parse(text) })))
      })
      request.on("error", () => {}) // the server may close the connection while we still write
      request.end(body)
    }))

layer(TestServer(), { timeout: "120 seconds" })("error envelope", (it) => {
  it.effect("an unknown route answers 404 not_found and a known one's wrong method 405, in the envelope, never HTML", () =>
    Effect.gen(function*() {
      for (const path of ["/api/nope", "/", "/favicon.ico"]) {
        const reply = yield* call("GET", path)
        expectError(reply, 404, "not_found")
        expect(reply.body.error).toContain(path)
      }
      for (const [method, path] of [["PATCH", "/api/users/me"], ["DELETE", "/api/health"]] as const) {
        const reply = yield* call(method, path)
        expectError(reply, 405, "method_not_allowed")
        expect(reply.body.error).toContain(path)
        expect(reply.headers.get("allow")).toContain("GET")
      }
    }))

  it.effect("malformed JSON, an empty body and a JSON null answer 400 invalid_input", () =>
    Effect.gen(function*() {
      const json = { "content-type": "application/json" }
      expectError(yield* call("POST", "/api/users/login", { raw: "{\"email\": ", headers: json }), 400, "invalid_input")
      expectError(yield* call("POST", "/api/users/login", { raw: "", headers: json }), 400, "invalid_input")
      expectError(yield* call("POST", "/api/users/login", { raw: "null", headers: json }), 400, "invalid_input")
    }))

  it.effect("a body over 1 MiB answers 413 payload_too_large, declared or streamed", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ email: "a@example.com", password: "x".repeat(mib) })
      // A declared Content-Length over the cap is answered before the body is read.
      expect(yield* postRaw("/api/users/login", big, true)).toMatchObject({
        status: 413,
        body: { code: "payload_too_large" }
      })
      // Without Content-Length (chunked), the cap applies while reading.
      const streamed = yield* postRaw("/api/users/login", big, false)
      expect(streamed).toMatchObject({ status: 413, body: { code: "payload_too_large" } })
      // Just under the cap is read (and then judged on its content).
      const fits = JSON.stringify({ email: "a@example.com", password: "x".repeat(mib - 100) })
      expectError(
        yield* call("POST", "/api/users/login", { raw: fits, headers: { "content-type": "application/json" } }),
        400,
        "invalid_input"
      )
    }))

  it.effect("every answer carries X-Request-Id; a valid incoming one is reused, anything else replaced", () =>
    Effect.gen(function*() {
      const ok = yield* call("GET", "/api/health", { headers: { "x-request-id": "trace-42.a:b" } })
      expect(ok.headers.get("x-request-id")).toBe("trace-42.a:b")
      const error = yield* call("GET", "/api/users/me", { headers: { "x-request-id": "trace-43" } })
      expect(error.body.request_id).toBe("trace-43")
      for (const bad of ["has space", "x".repeat(129), "<script>"]) {
        const reply = yield* call("GET", "/api/health", { headers: { "x-request-id": bad } })
        expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      }
      const a = yield* call("GET", "/api/health")
      const b = yield* call("GET", "/api/health")
      expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"))
    }))

  it.effect("random JSON bodies never answer a 5xx, and every failure is the envelope (fuzz)", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp()
      // Seeded, so a failure reproduces; a mix of arbitrary JSON and near-valid shapes.
      const bodies = FastCheck.sample(
        FastCheck.oneof(
          FastCheck.jsonValue(),
          FastCheck.record({
            email: FastCheck.jsonValue(),
            password: FastCheck.jsonValue(),
            username: FastCheck.jsonValue()
          }),
          FastCheck.record({ current_password: FastCheck.string(), new_password: FastCheck.string({ maxLength: 300 }) })
        ),
        { numRuns: 60, seed: 20261122 }
      )
      const targets = [
        ["POST", "/api/users/register"],
        ["POST", "/api/users/login"],
        ["POST", "/api/users/password"],
        ["POST", "/api/users/logout"],
        ["DELETE", "/api/users/sessions/1"],
        ["PUT", "/api/users/me"]
      ] as const
      for (const body of bodies) {
        for (const [method, path] of targets) {
          const reply = yield* call(method, path, { body, token })
          expect(reply.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500)
          if (reply.status >= 400) expect(reply.body?.code, `${method} ${path}`).toBeTypeOf("string")
        }
      }
    }))
})

// A Users service whose `me` dies: what any unexpected failure looks like from outside.
const DyingUsers = Layer.effect(
  Users,
  Effect.map(Users, (real) => Users.make({ ...real, me: () => Effect.die(new Error("secret internal detail")) }))
)

const DyingServer = HttpApiBuilder.serve(requestContext).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(ApiLive),
  Layer.provide(DyingUsers),
  Layer.provideMerge(PlatformLive),
  Layer.provideMerge(TestConfig())
)

layer(DyingServer, { timeout: "120 seconds" })("a defect", (it) => {
  it.effect("answers 500 internal_error in the envelope without the cause or a stack trace", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp()
      const reply = yield* call("GET", "/api/users/me", { token })
      expectError(reply, 500, "internal_error")
      expect(reply.text).not.toContain("secret internal detail")
      expect(Object.keys(reply.body).sort()).toEqual(["code", "error", "request_id"])
    }))
})

describe.skipIf(!testDatabaseUrl)("PostgreSQL going away", () => {
  const proxy = makeTcpProxy(new URL(testDatabaseUrl ?? "postgres://x"))
  // A fresh database, reached through the proxy.
  const ProxiedConfig = Layer.effect(
    PlatformConfig,
    Effect.gen(function*() {
      yield* Effect.promise(proxy.start)
      const options = yield* PlatformConfig
      if (options.storage.kind !== "postgres") throw new Error("expected PostgreSQL")
      const url = new URL(Redacted.value(options.storage.url))
      url.host = `127.0.0.1:${proxy.port()}`
      return { ...options, storage: { kind: "postgres" as const, url: Redacted.make(url.toString()) } }
    })
  ).pipe(Layer.provide(TestConfig(testStorages[1])))
  const OutageServer = HttpApiBuilder.serve(requestContext).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ApiLive),
    Layer.provideMerge(PlatformLive),
    Layer.provideMerge(ProxiedConfig)
  )

  layer(OutageServer, { timeout: "120 seconds", excludeTestServices: true })("outage", (it) => {
    it.effect("answers 503 unavailable while the database is unreachable, and recovers when it is back", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp()
        expect((yield* call("GET", "/api/users/me", { token })).status).toBe(200)
        yield* Effect.promise(proxy.stop)
        const down = yield* call("GET", "/api/users/me", { token })
        expectError(down, 503, "unavailable")
        expectError(yield* call("GET", "/api/health"), 503, "unavailable")
        yield* Effect.promise(proxy.start)
        // The pool reconnects on the next request; poll with a deadline rather than sleep.
        let status = 0
        for (let i = 0; i < 50 && status !== 200; i++) {
          status = (yield* call("GET", "/api/users/me", { token })).status
          if (status !== 200) yield* Effect.sleep("100 millis")
        }
        expect(status).toBe(200)
      }))
  })
})
