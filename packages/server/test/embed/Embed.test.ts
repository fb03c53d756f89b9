import { describe, expect, it } from "@effect/vitest"
import { type PlatformOptions, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { testOptions } from "@trading-platform/core/testing"
import { type EmbedOptions, makeNodeHandler, makeWebHandler } from "@trading-platform/server"
import { Duration, Effect, Option } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import WebSocket from "ws"
import { openSseAt, openWsAt } from "../support/StreamClients.js"
import { uniqueUser } from "../support/TestServer.js"

const config = testOptions({ kind: "pglite", dataDir: "memory://" })
const json = (body: unknown, token?: string) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body)
})

/** A host as docs/embedding.md shows it: its own page, `/api/` to the platform, and its upgrades too. */
const embeddedHost = async (options: EmbedOptions) => {
  const platform = await makeNodeHandler(options)
  const host = createServer((req, res) => {
    if (req.url?.startsWith("/api/")) return platform.handler(req, res)
    res.writeHead(200, { "content-type": "text/plain" }).end("host page")
  })
  host.on("upgrade", platform.upgrade)
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
  let closed: Promise<void> | undefined
  return {
    base,
    /** Ends the platform (its streams first), then the host; once. */
    close: () =>
      closed ??= platform.dispose().then(() => {
        host.closeAllConnections()
        return new Promise<void>((resolve) => host.close(() => resolve()))
      })
  }
}

const signUp = async (base: string, prefix: string) => {
  const user = uniqueUser(prefix)
  expect((await fetch(`${base}/api/users/register`, json(user))).status).toBe(201)
  const login = await fetch(`${base}/api/users/login`, json({ email: user.email, password: user.password }))
  return (await login.json()).session_token as string
}

const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

/** An upgrade of `path` (not `/api/ws`): the status and body of the refusal. */
const upgradeRefusal = (url: string) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const socket = new WebSocket(url)
    socket.on("open", () => reject(new Error(`${url} upgraded`)))
    socket.on("error", () => {})
    socket.on("unexpected-response", (request, response) => {
      let text = ""
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => {
        request.destroy()
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) })
      })
    })
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

  it(
    "after dispose, both handlers answer 503 unavailable at once, and an upgrade is refused",
    { timeout: 60_000 },
    async () => {
      const node = await makeNodeHandler({ config })
      await node.dispose()
      const answered = await new Promise<{ status: number; body: any }>((resolve) => {
        const server = createServer(node.handler)
        server.on("upgrade", node.upgrade)
        server.listen(0, "127.0.0.1", async () => {
          const base = `127.0.0.1:${(server.address() as AddressInfo).port}`
          const reply = await fetch(`http://${base}/api/users/me`)
          const refusal = await upgradeRefusal(`ws://${base}/api/ws`)
          expect(refusal).toMatchObject({ status: 503, body: { code: "unavailable" } })
          server.close()
          resolve({ status: reply.status, body: await reply.json() })
        })
      })
      expect(answered).toMatchObject({ status: 503, body: { code: "unavailable", error: expect.any(String) } })
      expect(answered.body.request_id).toEqual(expect.any(String))

      const web = makeWebHandler({ config })
      expect((await web.handler(new Request("http://host/api/health"))).status).toBe(200)
      await web.dispose()
      const late = await web.handler(new Request("http://host/api/users/me"))
      expect(late.status).toBe(503)
      expect(await late.json()).toMatchObject({ code: "unavailable" })
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
      // No socket to upgrade: the WebSocket answers the envelope, and holds no lease after.
      for (let i = 0; i < 2; i++) {
        const ws = await handler(
          new Request(`http://host/api/ws?session_token=${login.session_token}`, {
            headers: { upgrade: "websocket", connection: "Upgrade" }
          })
        )
        expect(ws.status).toBe(400)
        expect(await ws.json()).toMatchObject({
          code: "invalid_input",
          error: expect.stringMatching(/^GET \/api\/ws opens a WebSocket/)
        })
      }
    } finally {
      await dispose()
    }
  })

  it(
    "makeNodeHandler's upgrade handler serves /api/ws beside the SSE stream: the reference server's auth, lease, channels and close on dispose",
    { timeout: 90_000 },
    async () => {
      const host = await embeddedHost({ config })
      try {
        const token = await signUp(host.base, "embedws")
        const sse = await run(openSseAt(host.base, "?symbols=BTC", { token }))
        expect(sse.status).toBe(200)
        expect((await sse.next("snapshot")).data.exchange).toBe("venue1")

        // The token's one stream is open: the upgrade is refused with the envelope, as by `npm start`.
        const second = await run(openWsAt(host.base, `?session_token=${token}`, {}))
        expect(await second.refusal).toMatchObject({ status: 429, body: { code: "rate_limited", retry_after: 5 } })
        const bad = await run(openWsAt(host.base, "?session_token=not-a-token", {}))
        expect(await bad.refusal).toMatchObject({ status: 401, body: { code: "unauthorized" } })
        expect(await upgradeRefusal(`${host.base.replace("http", "ws")}/api/nothing-here`)).toMatchObject({
          status: 404,
          body: { code: "not_found" }
        })

        // Closed, the stream's lease is free at once: a socket authenticating by its first message opens.
        sse.close()
        const ws = await run(openWsAt(host.base, "", {}))
        expect(await ws.refused).toBeUndefined()
        ws.send({ type: "auth", token })
        ws.send({ type: "ping" })
        expect(await ws.next()).toEqual({ type: "pong", channel: null })
        ws.send({ type: "subscribe", channel: "prices:btc" })
        expect(await ws.next()).toEqual({ type: "subscribed", channel: "prices:btc" })
        ws.send({ type: "subscribe", channel: "prices:NOPE" })
        expect(await ws.next()).toMatchObject({ type: "error", code: "symbol_not_listed", channel: "prices:NOPE" })
        ws.send({ type: "subscribe", channel: "weather" })
        expect(await ws.next()).toMatchObject({ type: "error", code: "invalid_input", channel: "weather" })

        // Disposing the platform closes its sockets as stopping the reference server does.
        await host.close()
        expect(await ws.closed).toEqual({ code: 1001, reason: "Server shutting down" })
      } finally {
        await host.close()
      }
    }
  )

  it(
    "the WebSocket limits hold through makeNodeHandler: message size, messages a minute, inbox, unauthenticated sockets per address, time to authenticate",
    { timeout: 90_000 },
    async () => {
      const limited: PlatformOptions = {
        ...config,
        trustProxy: true,
        rateLimits: {
          ...rateLimitPolicyPerMinute({ auth: 10_000, read: 10_000, write: 10_000 }),
          websocket_messages_per_min: 20
        },
        websocket: {
          ...config.websocket,
          maxQueuedMessages: 3,
          maxUnauthenticatedPerIp: 2,
          authTimeout: Duration.seconds(1)
        }
      }
      const host = await embeddedHost({ config: limited })
      const from = (ip: string) => ({ "x-forwarded-for": ip })
      try {
        const big = await run(openWsAt(host.base, "", from("10.1.0.1")))
        big.send("x".repeat(2 * 1024 * 1024))
        expect((await big.closed).code).toBe(1009)

        const silent = await run(openWsAt(host.base, "", from("10.1.0.2")))
        expect(await silent.next()).toMatchObject({ type: "error", code: "unauthorized", error: "No token within 1s" })
        expect(await silent.closed).toEqual({ code: 1008, reason: "Authentication timeout" })

        const waiting = [
          await run(openWsAt(host.base, "", from("10.1.0.3"))),
          await run(openWsAt(host.base, "", from("10.1.0.3")))
        ]
        const third = await run(openWsAt(host.base, "", from("10.1.0.3")))
        expect(await third.next()).toMatchObject({ type: "error", code: "rate_limited" })
        expect(await third.closed).toEqual({ code: 1013, reason: "Too many unauthenticated sockets" })
        for (const ws of waiting) ws.socket.close()

        const inbox = await run(
          openWsAt(host.base, `?session_token=${await signUp(host.base, "embedinbox")}`, from("10.1.0.4"))
        )
        inbox.send({ type: "ping" })
        expect(await inbox.next()).toEqual({ type: "pong", channel: null })
        for (let i = 0; i < 10; i++) inbox.send({ type: "ping" })
        expect(await inbox.next((m) => m.type === "error")).toMatchObject({ code: "rate_limited" })
        expect(await inbox.closed).toEqual({ code: 1013, reason: "Too many messages waiting" })

        const flood = await run(
          openWsAt(host.base, `?session_token=${await signUp(host.base, "embedflood")}`, from("10.1.0.5"))
        )
        // One at a time, so the inbox never fills: what closes it is the count a minute.
        for (let i = 0; i < 20; i++) {
          flood.send({ type: "ping" })
          expect(await flood.next()).toEqual({ type: "pong", channel: null })
        }
        flood.send({ type: "ping" })
        expect(await flood.next()).toMatchObject({ type: "error", code: "rate_limited" })
        expect(await flood.closed).toEqual({ code: 1008, reason: "Message rate limit exceeded" })
      } finally {
        await host.close()
      }
    }
  )
})
