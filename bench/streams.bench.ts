// 1,000 concurrent market-intelligence SSE clients on one server process, against a raw node:http
// SSE fan-out baseline in the same run: server heap per connection, and the time from a trigger's
// publication to its delivery at every client (p50/p99). The clients live in a worker thread (its
// own event loop and heap), so the main thread's heap is the server's alone.
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import {
  PlatformConfig,
  PlatformLive,
  platformOptions,
  rateLimitPolicyPerMinute,
  SignalEngine,
  Users
} from "@trading-platform/core"
import { ApiLive, EndStreamsOnShutdown, requestContext } from "@trading-platform/server"
import { Effect, Layer, Queue } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createServer, request, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Worker } from "node:worker_threads"

const clients = Number(process.env["BENCH_STREAM_CLIENTS"] ?? 1000)
const triggers = 20

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heap = () => {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage().heapUsed
}
const now = () => performance.timeOrigin + performance.now()
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The worker: opens `clients` SSE connections, reports when all are open and each trigger's arrival time. */
const startClients = (url: string, tokens: ReadonlyArray<string>) => {
  const worker = new Worker(
    `const { workerData, parentPort } = require("node:worker_threads")
    const http = require("node:http")
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
    let open = 0
    for (const token of workerData.tokens) {
      http.get(workerData.url, { agent, headers: { authorization: "Bearer " + token } }, (res) => {
        if (res.statusCode !== 200) throw new Error("status " + res.statusCode)
        res.setEncoding("utf8")
        let buffer = ""
        res.on("data", (chunk) => {
          buffer += chunk
          let end
          while ((end = buffer.indexOf("\\n\\n")) !== -1) {
            const frame = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            if (frame.includes("event: snapshot") && ++open === workerData.tokens.length) parentPort.postMessage({ open })
            const data = /^data: (.*)$/m.exec(frame)
            if (!frame.includes("event: update") || !data) continue
            const update = JSON.parse(data[1])
            if (update.kind === "trigger") parentPort.postMessage({ id: update.trigger.id, at: performance.timeOrigin + performance.now() })
          }
        })
      })
    }`,
    { eval: true, workerData: { url, tokens } }
  )
  const arrivals = new Map<number, Array<number>>()
  const opened = new Promise<void>((resolve, reject) => {
    worker.on("message", (m: { open?: number; id?: number; at?: number }) => {
      if (m.open !== undefined) resolve()
      else arrivals.set(m.id!, [...(arrivals.get(m.id!) ?? []), m.at!])
    })
    worker.once("error", reject)
  })
  return { opened, arrivals, stop: () => worker.terminate() }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

interface Result {
  readonly bytesPerConnection: number
  readonly p50: number
  readonly p99: number
  readonly delivered: number
}

/** Waits until every client has every trigger, then the latencies from each publication. */
const latencies = async (arrivals: Map<number, Array<number>>, published: Map<number, number>) => {
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    if ([...published.keys()].every((id) => (arrivals.get(id)?.length ?? 0) >= clients)) break
    await pause(20)
  }
  const all = [...published].flatMap(([id, at]) => (arrivals.get(id) ?? []).map((t) => t - at)).sort((a, b) => a - b)
  return { p50: percentile(all, 0.5), p99: percentile(all, 0.99), delivered: all.length }
}

/** The baseline: node:http holding the responses in a Set and writing each trigger to all of them. */
const rawBaseline = async (): Promise<Result> => {
  const open = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.write(`event: snapshot\nid: 0-1\ndata: {}\n\n`)
    open.add(res)
    req.on("close", () => open.delete(res))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const before = heap()
  const tokens = Array.from({ length: clients }, (_, i) => `t${i}`)
  const run = startClients(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, tokens)
  await run.opened
  const during = heap()
  const published = new Map<number, number>()
  for (let id = 1; id <= triggers; id++) {
    const frame = `event: update\nid: ${id}-2\ndata: ${JSON.stringify({ kind: "trigger", trigger: { id } })}\n\n`
    published.set(id, now())
    for (const res of open) res.write(frame)
    await pause(50)
  }
  const result = await latencies(run.arrivals, published)
  await run.stop()
  for (const res of open) res.destroy()
  server.close()
  return { bytesPerConnection: (during - before) / clients, ...result }
}

/** The platform: one user with `clients` session tokens, each streaming BTC; triggers from the signal engine. */
const platform = () =>
  Effect.gen(function*() {
    const { address } = yield* HttpServer.HttpServer
    const port = address._tag === "TcpAddress" ? address.port : 0
    const users = yield* Users
    const sql = yield* SqlClient.SqlClient
    const engine = yield* SignalEngine
    const base = `http://127.0.0.1:${port}`
    // A connection per request: a kept-alive one may be closed by the server while the clients connect.
    const post = (path: string, body: unknown, token?: string) =>
      new Promise<any>((resolve, reject) => {
        const headers = { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }
        request(base + path, { method: "POST", headers, agent: false }, (res) => {
          let text = ""
          res.on("data", (chunk) => (text += chunk))
          res.on("end", () => resolve(JSON.parse(text)))
        }).on("error", reject).end(JSON.stringify(body))
      })
    const email = `bench-${randomBytes(4).toString("hex")}@example.com`
    yield* Effect.promise(() =>
      post("/api/users/register", { email, username: email.split("@")[0], password: "bench password" })
    )
    const login = yield* users.login({ email, password: "bench password" }, undefined)
    // Session tokens straight into the table: a login each would spend seconds in scrypt.
    const tokens = Array.from({ length: clients }, () => `tps_${randomBytes(32).toString("base64url")}`)
    for (const token of tokens) {
      const hash = createHash("sha256").update(token).digest("hex")
      yield* sql`INSERT INTO sessions (user_id, token_hash, created_at, expires_at)
        VALUES (${login.user.id}, ${hash}, now(), now() + interval '1 day')`
    }
    const signal = yield* Effect.promise(() =>
      post("/api/signals", {
        signal_name: "oi",
        trigger_condition: { metric: "oi", operator: "gt", threshold: 0, time_window: "1m" }
      }, login.session_token)
    )

    // Publication times as a subscriber of the engine sees them, next to the hub's own subscription.
    const published = new Map<number, number>()
    const seen = yield* engine.subscribe
    yield* Effect.forkScoped(Effect.forever(Effect.map(Queue.take(seen), (t) => published.set(t.id, now()))))

    const before = heap()
    const run = startClients(`${base}/api/market-intelligence/stream?symbols=BTC`, tokens)
    yield* Effect.promise(() => run.opened)
    const during = heap()
    const symbols = ["BTC", "ETH", "SOL", "BNB", "XRP", "DOGE", "ADA", "AVAX", "LINK", "DOT"]
    for (let i = 0; i < triggers; i++) {
      // A new pool fires once on its first round.
      yield* Effect.promise(() =>
        post("/api/signals/pools", {
          pool_name: `p${i}`,
          signal_ids: [signal.id],
          symbols: [symbols[i % symbols.length]]
        }, login.session_token)
      )
      yield* engine.evaluateNow
      yield* Effect.promise(() => pause(50))
    }
    const result = yield* Effect.promise(() => latencies(run.arrivals, published))
    yield* Effect.promise(() => run.stop())
    return { bytesPerConnection: (during - before) / clients, ...result } satisfies Result
  })

const config = PlatformConfig.layer(platformOptions({
  storage: { kind: "pglite", dataDir: "memory://" },
  rateLimits: { ...rateLimitPolicyPerMinute({ auth: 1e9, read: 1e9, write: 1e9 }) },
  signals: { ...platformOptions().signals, sampler: false }
}))

const Server = HttpApiBuilder.serve(requestContext).pipe(
  Layer.provide(EndStreamsOnShutdown),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(ApiLive),
  Layer.provideMerge(PlatformLive),
  Layer.provide(config),
  Layer.provide(Layer.setTracerEnabled(false))
)

const row = (name: string, r: Result, base: Result) =>
  `| ${name} | ${r.delivered} | ${(r.bytesPerConnection / 1024).toFixed(1)} KiB | ${
    (r.bytesPerConnection / base.bytesPerConnection).toFixed(1)
  } | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${(r.p99 / base.p99).toFixed(1)} |`

export const run = async () => {
  const baseline = await rawBaseline()
  const streams = await Effect.runPromise(
    Effect.scoped(Effect.flatMap(Layer.build(Server), (context) => Effect.provide(platform(), context)))
  )
  console.log(`${clients} SSE clients, ${triggers} triggers each fanned out to all of them\n`)
  console.log("| server | deliveries | heap per connection | vs baseline | p50 | p99 | p99 vs baseline |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  console.log(row("raw node:http SSE fan-out (baseline)", baseline, baseline))
  console.log(row("`GET /api/market-intelligence/stream`", streams, baseline))
}
