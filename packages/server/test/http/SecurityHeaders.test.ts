import { describe, expect, layer } from "@effect/vitest"
import { ConsoleLive } from "@trading-platform/server"
import { DocsPageLive } from "@trading-platform/server/docs"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { call, TestServer, uniqueUser } from "../support/TestServer.js"

describe("security headers", () => {
  layer(TestServer().pipe(Layer.provide(Layer.merge(DocsPageLive, ConsoleLive))), { timeout: "120 seconds" })((it) => {
    it.effect("POST /api/users/register and /api/users/login answer Cache-Control: no-store, failures too", () =>
      Effect.gen(function*() {
        const user = uniqueUser("nostore")
        const registered = yield* call("POST", "/api/users/register", { body: user })
        expect(registered.status).toBe(201)
        expect(registered.headers.get("cache-control")).toBe("no-store")
        const login = yield* call("POST", "/api/users/login", { body: { email: user.email, password: user.password } })
        expect(login.status).toBe(200)
        expect(login.body.session_token).toEqual(expect.any(String))
        expect(login.headers.get("cache-control")).toBe("no-store")
        const refused = yield* call("POST", "/api/users/login", {
          body: { email: user.email, password: "not the password 123" }
        })
        expect(refused.status).toBe(401)
        expect(refused.headers.get("cache-control")).toBe("no-store")
        const taken = yield* call("POST", "/api/users/register", { body: user })
        expect(taken.status).toBe(409)
        expect(taken.headers.get("cache-control")).toBe("no-store")
      }))

    it.effect("GET /docs answers a Content-Security-Policy allowing only its own inline scripts, and nosniff", () =>
      Effect.gen(function*() {
        const docs = yield* call("GET", "/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("x-content-type-options")).toBe("nosniff")
        const csp = docs.headers.get("content-security-policy")!
        const directives = new Map(csp.split("; ").map((d) => [d.split(" ")[0]!, d.split(" ").slice(1)]))
        expect(directives.get("default-src")).toEqual(["'none'"])
        expect(directives.get("frame-ancestors")).toEqual(["'none'"])
        expect(directives.get("connect-src")).toEqual(["'self'"])
        // Each inline script of the page by its hash, and WebAssembly: no 'unsafe-inline', no eval, no host.
        const scripts = [...docs.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) =>
          `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`
        )
        expect(scripts.length).toBeGreaterThan(0)
        expect(directives.get("script-src")).toEqual([...scripts, "'wasm-unsafe-eval'"])
      }))

    it.effect("GET /console answers a Content-Security-Policy and nosniff", () =>
      Effect.gen(function*() {
        const page = yield* call("GET", "/console")
        expect(page.status).toBe(200)
        expect(page.headers.get("x-content-type-options")).toBe("nosniff")
        expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
        expect(page.headers.get("content-security-policy")).toContain("script-src 'self'")
      }))
  })
})
