import { describe, expect, layer } from "@effect/vitest"
import { TestConfig, testStorages } from "@trading-platform/core/testing"
import { ServerLive } from "@trading-platform/server"
import { ConfigProvider, Effect, Layer } from "effect"
import { call, signUp, TestServer } from "../support/TestServer.js"

const app = "https://app.example.com"
const preflight = (origin: string) =>
  call("OPTIONS", "/api/users/me", {
    headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`CORS over ${storage.name}`, () => {
    layer(
      ServerLive({ port: 0, host: "127.0.0.1" }).pipe(
        Layer.provide(
          Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["CORS_ORIGINS", `${app}, http://localhost:5173`]])))
        ),
        Layer.provideMerge(TestConfig(storage))
      ),
      { timeout: "120 seconds" }
    )((it) => {
      it.effect("with CORS_ORIGINS a preflight from a listed origin is answered with what it may send", () =>
        Effect.gen(function*() {
          const reply = yield* preflight(app)
          expect(reply.status).toBe(204)
          expect(reply.headers.get("access-control-allow-origin")).toBe(app)
          expect(reply.headers.get("access-control-allow-methods")).toContain("DELETE")
          expect(reply.headers.get("access-control-allow-headers")).toBe("authorization")
        }))

      it.effect("with CORS_ORIGINS a request from a listed origin carries the CORS headers; another origin none", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("cors")
          const listed = yield* call("GET", "/api/users/me", { token, headers: { origin: "http://localhost:5173" } })
          expect(listed.status).toBe(200)
          expect(listed.headers.get("access-control-allow-origin")).toBe("http://localhost:5173")
          expect(listed.headers.get("access-control-expose-headers")).toContain("x-request-id")
          expect(listed.headers.get("vary")).toContain("Origin")
          const failed = yield* call("GET", "/api/users/me", { headers: { origin: app } })
          expect(failed.status).toBe(401)
          expect(failed.headers.get("access-control-allow-origin")).toBe(app)
          const other = yield* call("GET", "/api/users/me", { token, headers: { origin: "https://evil.example" } })
          expect(other.status).toBe(200)
          expect(other.headers.get("access-control-allow-origin")).toBe(null)
          expect((yield* preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBe(null)
        }))
    })

    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("without CORS_ORIGINS no answer carries a CORS header", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("nocors")
          const plain = yield* call("GET", "/api/users/me", { token, headers: { origin: app } })
          expect(plain.status).toBe(200)
          const options = yield* preflight(app)
          expect(options.headers.get("access-control-allow-origin")).toBe(null)
          for (const reply of [plain, options]) {
            expect([...reply.headers.keys()].filter((h) => h.startsWith("access-control-"))).toEqual([])
          }
        }))
    })
  })
}
