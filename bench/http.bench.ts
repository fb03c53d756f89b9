// HTTP throughput of the reference server against a raw node:http baseline, in one process run.
// The load comes from a worker thread (its own event loop) holding 32 keep-alive connections.
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PlatformConfig, PlatformLive, platformOptions, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { ApiLive, requestContext, ServerLive } from "@trading-platform/server"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Worker } from "node:worker_threads"
import pg from "pg"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 5)
const connections = 32
// V8 and PGlite's WebAssembly keep optimising for many seconds under load, so each scenario is
// loaded until two consecutive one-second rates agree within 5% (at most 30 s) before it is measured.
const maxWarmUpMs = 30_000

/** Requests per second and the 99th percentile latency (ms) of the measured seconds. */
interface Load {
  readonly rate: number
  readonly p99: number
}

const load = (url: string, headers: Record<string, string>) =>
  new Promise<Load>((resolve, reject) => {
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads")
      const http = require("node:http")
      const agent = new http.Agent({ keepAlive: true, maxSockets: workerData.connections })
      let done = 0, stop = false, measuring = false
      const latencies = []
      const one = () => {
        if (stop) return
        const sent = performance.now()
        http.get(workerData.url, { agent, headers: workerData.headers }, (res) => {
          res.resume()
          res.on("end", () => {
            if (res.statusCode !== 200) throw new Error("status " + res.statusCode)
            done++
            if (measuring) latencies.push(performance.now() - sent)
            one()
          })
        }).on("error", (e) => { if (!stop) throw e })
      }
      for (let i = 0; i < workerData.connections; i++) one()
      const measure = () => {
        const warm = done
        measuring = true
        setTimeout(() => {
          stop = true
          latencies.sort((a, b) => a - b)
          parentPort.postMessage({ count: done - warm, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0 })
          agent.destroy()
        }, workerData.ms)
      }
      const started = Date.now(); let last = 0, previous = -1
      const tick = setInterval(() => {
        const rate = done - last; last = done
        if ((previous > 0 && Math.abs(rate - previous) <= 0.05 * previous) || Date.now() - started >= workerData.maxWarmUpMs) { clearInterval(tick); measure() }
        previous = rate
      }, 1000)`,
      { eval: true, workerData: { url, headers, connections, ms: seconds * 1000, maxWarmUpMs } }
    )
    worker.once("message", (m: { count: number; p99: number }) => resolve({ rate: m.count / seconds, p99: m.p99 }))
    worker.once("error", reject)
  })

const config = PlatformConfig.layer(platformOptions({
  storage: { kind: "pglite", dataDir: "memory://" },
  rateLimits: rateLimitPolicyPerMinute({ auth: 1e9, read: 1e9, write: 1e9 })
}))
const listen = { port: 0, host: "127.0.0.1" }

const rawBaseline = async () => {
  const body = JSON.stringify({ status: "ok", version: "0.1.0", storage: "pglite" })
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "x-request-id": crypto.randomUUID() }).end(body)
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const result = await load(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/health`, {})
  server.close()
  return result
}

/**
 * The same work as `GET /api/users/me` on raw node:http and a pooled `pg` (pg's default pool of
 * 10, as the server's): hash the presented token, read the session with its user, check it is
 * neither revoked nor expired, read the user, answer its JSON.
 */
const rawUsersMe = async (url: string, token: string) => {
  const pool = new pg.Pool({ connectionString: url })
  // Dropping the bench database ends connections still held by requests in flight when the load stopped.
  pool.on("error", () => {})
  const server = createServer((req, res) => {
    const presented = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "")?.[1] ?? ""
    const hash = createHash("sha256").update(presented).digest("hex")
    pool.query(
      "SELECT s.id, s.user_id, s.user_agent, s.created_at, s.last_used_at, s.expires_at, s.revoked_at, u.email, u.username FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1",
      [hash]
    ).then(async ({ rows: [session] }) => {
      if (!session || session.revoked_at !== null || session.expires_at.getTime() <= Date.now()) {
        return void res.writeHead(401).end()
      }
      const { rows: [user] } = await pool.query("SELECT * FROM users WHERE id = $1", [session.user_id])
      const body = JSON.stringify({
        id: user.id,
        email: user.email,
        username: user.username,
        created_at: user.created_at.toISOString()
      })
      res.writeHead(200, { "content-type": "application/json", "x-request-id": crypto.randomUUID() }).end(body)
    }).catch(() => res.destroy()) // requests still in flight when the load stops meet an ended pool
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const result = await load(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/users/me`, {
    authorization: `Bearer ${token}`
  })
  server.close()
  await pool.end()
  return result
}

/** A fresh database on `TEST_DATABASE_URL`'s server for the PostgreSQL scenarios, dropped afterwards. */
const withPostgres = async <A>(adminUrl: string, use: (url: string) => Promise<A>) => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const name = `tp_bench_${randomBytes(6).toString("hex")}`
  await admin.query(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return await use(url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}

/** Registers and logs in a fresh user; its session token. */
const sessionToken = (base: string) => {
  const user = { email: "bench@example.com", password: "bench password", username: "bench" }
  const post = (p: string, b: unknown) =>
    fetch(base + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(b) })
  return post("/api/users/register", user).then(() => post("/api/users/login", user)).then((r) => r.json())
    .then((login: { session_token: string }) => login.session_token)
}

/** Throughput of `path` on a server layer, with a fresh user's token. */
const measure = (server: Layer.Layer<HttpServer.HttpServer, unknown>, path: string, authenticated: boolean) =>
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
    const headers: Record<string, string> = {}
    if (authenticated) headers["authorization"] = `Bearer ${yield* Effect.promise(() => sessionToken(base))}`
    return yield* Effect.promise(() => load(base + path, headers))
  }).pipe(Effect.provide(server), Effect.scoped, Effect.runPromise)

export const run = async () => {
  const reference = ServerLive(listen).pipe(Layer.provide(config))
  // The same server without the tracer switch: what Effect's tracer costs.
  const traced = HttpApiBuilder.serve(requestContext).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, listen)),
    Layer.provide(ApiLive),
    Layer.provide(PlatformLive),
    Layer.provide(config)
  )
  const raw = await rawBaseline()
  const rows: Array<[string, Load]> = [
    ["raw node:http, static JSON (baseline)", raw],
    ["GET /api/health (rate limit, request id, SELECT 1)", await measure(reference, "/api/health", false)],
    ["GET /api/users/me (rate limit, token lookup)", await measure(reference, "/api/users/me", true)],
    ["GET /api/users/me with Effect's tracer on", await measure(traced, "/api/users/me", true)]
  ]
  const postgresUrl = process.env["TEST_DATABASE_URL"]
  if (postgresUrl) {
    // The same read on PostgreSQL: the server, then the raw same-work server on the same database and token.
    await withPostgres(postgresUrl, async (url) => {
      const onPostgres = ServerLive(listen).pipe(Layer.provide(PlatformConfig.layer(platformOptions({
        storage: { kind: "postgres", url: Redacted.make(url) },
        secretKey: Option.some(Redacted.make("bench-secret-key-0123456789abcdef0123456789")),
        rateLimits: rateLimitPolicyPerMinute({ auth: 1e9, read: 1e9, write: 1e9 })
      }))))
      let token = ""
      const server = await Effect.gen(function*() {
        const address = (yield* HttpServer.HttpServer).address
        const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
        token = yield* Effect.promise(() => sessionToken(base))
        return yield* Effect.promise(() => load(base + "/api/users/me", { authorization: `Bearer ${token}` }))
      }).pipe(Effect.provide(onPostgres), Effect.scoped, Effect.runPromise)
      const raw = await rawUsersMe(url, token)
      console.log(
        `PostgreSQL, ${connections} connections: GET /api/users/me ${Math.round(server.rate)} requests/s ` +
          `(p99 ${server.p99.toFixed(0)} ms), raw node:http + pg doing the same work ${
            Math.round(raw.rate)
          } requests/s ` +
          `(p99 ${raw.p99.toFixed(0)} ms): ${(server.rate / raw.rate).toFixed(2)}x\n`
      )
    })
  }
  console.log(
    `${connections} keep-alive connections from a worker thread, ${seconds} s each after warming up until steady\n`
  )
  console.log("| scenario | requests/s | p99 ms | vs baseline |\n|---|---:|---:|---:|")
  for (const [name, { p99, rate }] of rows) {
    console.log(`| ${name} | ${Math.round(rate)} | ${p99.toFixed(0)} | ${(rate / raw.rate).toFixed(2)} |`)
  }
  console.log(`\nrss after the runs: ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB`)
}
