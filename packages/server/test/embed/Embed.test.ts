import { describe, expect, it } from "@effect/vitest"
import { testOptions } from "@trading-platform/core/testing"
import { makeNodeHandler, makeWebHandler } from "@trading-platform/server"
import { Duration, Option } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { uniqueUser } from "../support/TestServer.js"

const config = testOptions({ kind: "pglite", dataDir: "memory://" })
const json = (body: unknown, token?: string) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body)
})

describe("embedding", () => {
  it(
    "makeNodeHandler serves the API inside a plain node:http server that keeps its own routes",
    { timeout: 60_000 },
    async () => {
      const { dispose, handler } = await makeNodeHandler({ config })
      const host = createServer((req, res) => {
        if (req.url?.startsWith("/api/")) return handler(req, res)
        res.writeHead(200, { "content-type": "text/plain" }).end("host page")
      })
      await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
      const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
      try {
        const user = uniqueUser("embed")
        expect((await fetch(`${base}/api/users/register`, json(user))).status).toBe(201)
        const login =
          await (await fetch(`${base}/api/users/login`, json({ email: user.email, password: user.password }))).json()
        const me = await fetch(`${base}/api/users/me`, { headers: { authorization: `Bearer ${login.session_token}` } })
        expect(me.status).toBe(200)
        expect(me.headers.get("x-request-id")).toBeTruthy()
        expect(me.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
        expect((await me.json()).email).toBe(user.email)
        const missing = await fetch(`${base}/api/nope`)
        expect(missing.status).toBe(404)
        expect((await missing.json()).code).toBe("not_found")
        expect(await (await fetch(`${base}/elsewhere`)).text()).toBe("host page")
      } finally {
        await new Promise((resolve) => host.close(resolve))
        await dispose()
      }
    }
  )

  it("makeWebHandler answers fetch-style requests with no socket at all", { timeout: 60_000 }, async () => {
    const { dispose, handler } = makeWebHandler({
      config: { ...config, tokenTtl: Duration.days(1), redisUrl: Option.none() }
    })
    try {
      const user = uniqueUser("web")
      expect((await handler(new Request("http://host/api/users/register", json(user)))).status).toBe(201)
      const login = await (await handler(
        new Request("http://host/api/users/login", json({ email: user.email, password: user.password }))
      )).json()
      const day = 24 * 3600 * 1000
      expect(Date.parse(login.expires_at) - Date.now()).toBeLessThanOrEqual(day)
      const me = await handler(
        new Request("http://host/api/users/me", { headers: { authorization: `Bearer ${login.session_token}` } })
      )
      expect(me.status).toBe(200)
      const bad = await handler(
        new Request("http://host/api/users/login", {
          method: "POST",
          body: "{",
          headers: { "content-type": "application/json" }
        })
      )
      expect(bad.status).toBe(400)
      const body = await bad.json()
      expect(body.code).toBe("invalid_input")
      expect(body.request_id).toBe(bad.headers.get("x-request-id"))
    } finally {
      await dispose()
    }
  })
})
