// HTTP throughput of the reference server against a raw node:http baseline, in one process run.
// The load comes from a worker thread (its own event loop) holding 32 keep-alive connections.
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PlatformConfig, PlatformLive, platformOptions, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { ApiLive, requestContext, ServerLive } from "@trading-platform/server"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Worker } from "node:worker_threads"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 5)
const connections = 32
// V8 and PGlite's WebAssembly keep optimising for many seconds under load, so each scenario is
// loaded until two consecutive one-second rates agree within 5% (at most 30 s) before it is measured.
const maxWarmUpMs = 30_000

const load = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads")
      const http = require("node:http")
      const agent = new http.Agent({ keepAlive: true, maxSockets: workerData.connections })
      let done = 0, stop = false
      const one = () => {
        if (stop) return
        http.get(workerData.url, { agent, headers: workerData.headers }, (res) => {
          res.resume()
          res.on("end", () => { if (res.statusCode !== 200) throw new Error("status " + res.statusCode); done++; one() })
        }).on("error", (e) => { if (!stop) throw e })
      }
      for (let i = 0; i < workerData.connections; i++) one()
      const measure = () => { const warm = done; setTimeout(() => { stop = true; parentPort.postMessage(done - warm); agent.destroy() }, workerData.ms) }
      const started = Date.now(); let last = 0, previous = -1
      const tick = setInterval(() => {
        const rate = done - last; last = done
        if ((previous > 0 && Math.abs(rate - previous) <= 0.05 * previous) || Date.now() - started >= workerData.maxWarmUpMs) { clearInterval(tick); measure() }
        previous = rate
      }, 1000)`,
      { eval: true, workerData: { url, headers, connections, ms: seconds * 1000, maxWarmUpMs } }
    )
    worker.once("message", (count: number) => resolve(count / seconds))
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
  const rate = await load(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/health`, {})
  server.close()
  return rate
}

/** Throughput of `path` on a server layer, with a fresh user's token. */
const measure = (server: Layer.Layer<HttpServer.HttpServer, unknown>, path: string, authenticated: boolean) =>
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
    const headers: Record<string, string> = {}
    if (authenticated) {
      const user = { email: "bench@example.com", password: "bench password", username: "bench" }
      const post = (p: string, b: unknown) =>
        fetch(base + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(b) })
      yield* Effect.promise(() => post("/api/users/register", user))
      const login = yield* Effect.promise(() => post("/api/users/login", user).then((r) => r.json()))
      headers["authorization"] = `Bearer ${login.session_token}`
    }
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
  const rows: Array<[string, number]> = [
    ["raw node:http, static JSON (baseline)", raw],
    ["GET /api/health (rate limit, request id, SELECT 1)", await measure(reference, "/api/health", false)],
    ["GET /api/users/me (rate limit, token lookup)", await measure(reference, "/api/users/me", true)],
    ["GET /api/users/me with Effect's tracer on", await measure(traced, "/api/users/me", true)]
  ]
  console.log(`${connections} keep-alive connections from a worker thread, ${seconds} s each after warming up until steady\n`)
  console.log("| scenario | requests/s | vs baseline |\n|---|---:|---:|")
  for (const [name, rate] of rows) console.log(`| ${name} | ${Math.round(rate)} | ${(rate / raw).toFixed(2)} |`)
  console.log(`\nrss after the runs: ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB`)
}
