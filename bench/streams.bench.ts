// Concurrent live-stream clients on one server process, SSE and WebSocket, each against a raw
// fan-out baseline in the same run (node:http for SSE, `ws` for the WebSocket): server heap per
// connection, and the time from a trigger's publication to its delivery at every client
// (p50/p99). The clients live in a child process (their own heap, and their own file descriptors:
// 10,000 clients need 10,000 sockets on each side), so the main process's heap is the server's alone.
// BENCH_STREAM_CLIENTS sets the number of clients (1,000); BENCH_STREAM_HEAP_PROFILES=dir writes a
// sampling heap profile of what the server allocated and still holds once its clients are connected,
// by allocating stack, to see what a connection holds (a heap snapshot crashes Node 20 here).
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
import { Effect, Layer, Queue, Tracer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { createServer, request, type ServerResponse } from "node:http"
import { Session } from "node:inspector"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { type WebSocket, WebSocketServer } from "ws"
import { withoutRequestTracing, withRequestServices } from "../packages/server/src/http/RequestRuntime.js"

const clients = Number(process.env["BENCH_STREAM_CLIENTS"] ?? 1000)
const profiles = process.env["BENCH_STREAM_HEAP_PROFILES"]
const triggers = 20
const session = profiles ? new Session() : undefined
session?.connect()

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heap = (label: string) => {
  for (let i = 0; i < 3; i++) gc()
  if (session) {
    if (label.endsWith("before")) session.post("HeapProfiler.startSampling", { samplingInterval: 256 })
    else {
      session.post(
        "HeapProfiler.getSamplingProfile",
        (_, r) => writeFileSync(`${profiles}/${label}.heapprofile`, JSON.stringify(r.profile))
      )
      session.post("HeapProfiler.stopSampling")
    }
  }
  return process.memoryUsage().heapUsed
}
const now = () => performance.timeOrigin + performance.now()
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Kind = "sse" | "ws"

// The clients: at most 200 connecting at a time (a burst of 10,000 would overrun the listen
// backlog), each counted open at its first frame (SSE: the snapshot; WebSocket: `subscribed` to
// `triggers`); each trigger's arrival time is noted, and all are sent back when asked.
const clientScript = `
const http = require("node:http")
process.once("message", ({ kind, url, tokens, ws }) => {
  const arrivals = new Map()
  const arrived = (id) => {
    const at = performance.timeOrigin + performance.now()
    const list = arrivals.get(id)
    if (list) list.push(at)
    else arrivals.set(id, [at])
  }
  let next = 0
  let open = 0
  const opened = () => {
    if (++open === tokens.length) process.send({ open })
    else connect()
  }
  const failed = (error) => {
    console.error(kind + " client " + open + "/" + tokens.length + " open: " + error.message)
    process.exit(1)
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  const WebSocket = kind === "ws" ? require(ws) : undefined
  const connect = () => {
    if (next === tokens.length) return
    const headers = { authorization: "Bearer " + tokens[next++] }
    if (kind === "ws") {
      const socket = new WebSocket(url, { headers, perMessageDeflate: false })
      socket.on("open", () => socket.send(JSON.stringify({ type: "subscribe", channel: "triggers" })))
      socket.on("message", (data) => {
        const m = JSON.parse(data)
        if (m.type === "subscribed") opened()
        else if (m.type === "event" && m.channel === "triggers") arrived(m.data.id)
      })
      socket.on("unexpected-response", (_, res) => failed(new Error("status " + res.statusCode)))
      socket.on("error", failed)
      return
    }
    http.get(url, { agent, headers }, (res) => {
      if (res.statusCode !== 200) failed(new Error("status " + res.statusCode))
      res.setEncoding("utf8")
      let buffer = ""
      res.on("data", (chunk) => {
        buffer += chunk
        let end
        while ((end = buffer.indexOf("\\n\\n")) !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (frame.includes("event: snapshot")) opened()
          const data = /^data: (.*)$/m.exec(frame)
          if (!frame.includes("event: update") || !data) continue
          const update = JSON.parse(data[1])
          if (update.kind === "trigger") arrived(update.trigger.id)
        }
      })
    }).on("error", failed)
  }
  for (let i = 0; i < 200; i++) connect()
  process.on("message", async ({ expect }) => {
    for (const end = Date.now() + 60000; Date.now() < end;) {
      if (expect.every((id) => (arrivals.get(id) || []).length >= tokens.length)) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    process.send({ arrivals: [...arrivals] })
  })
})`

/** Starts the clients' process: `opened` once all are connected; `arrivals` of the ids expected. */
const startClients = (kind: Kind, url: string, tokens: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(process.execPath, ["-e", clientScript], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const messages = (want: "open" | "arrivals") =>
    new Promise<any>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (!(want in m)) return
        child.off("message", onMessage)
        resolve(m[want])
      }
      child.on("message", onMessage)
      child.once("exit", (code) => reject(new Error(`clients exited with ${code}`)))
    })
  // Progress on stderr: 10,000 streams take minutes to open.
  const started = Date.now()
  console.error(`${tokens.length} ${kind} clients connecting to ${url}`)
  const opened = messages("open").then(() => console.error(`  all open in ${(Date.now() - started) / 1000} s`))
  child.send({ kind, url, tokens, ws: createRequire(import.meta.url).resolve("ws") })
  return {
    opened,
    arrivals: async (expect: ReadonlyArray<number>) => {
      const reply = messages("arrivals")
      child.send({ expect })
      return new Map<number, Array<number>>(await reply)
    },
    stop: () => {
      child.kill()
      return new Promise((resolve) => child.once("exit", resolve))
    }
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN

interface Result {
  readonly bytesPerConnection: number
  readonly p50: number
  readonly p99: number
  readonly delivered: number
}

/** Latencies from each publication to each arrival. */
const latencies = (arrivals: Map<number, Array<number>>, published: Map<number, number>) => {
  const all = [...published].flatMap(([id, at]) => (arrivals.get(id) ?? []).map((t) => t - at)).sort((a, b) => a - b)
  return { p50: percentile(all, 0.5), p99: percentile(all, 0.99), delivered: all.length }
}

/**
 * A baseline: node:http holding the SSE responses in a Set, or `ws` holding the sockets subscribed
 * to `triggers`, and writing each trigger to every one of them.
 */
const rawBaseline = async (kind: Kind): Promise<Result> => {
  const writers = new Set<(frame: string) => void>()
  const server = createServer((req, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.write(`event: snapshot\nid: 0-1\ndata: {}\n\n`)
    const write = (frame: string) => res.write(frame)
    writers.add(write)
    req.on("close", () => writers.delete(write))
  })
  const wss = new WebSocketServer({ server })
  wss.on("connection", (ws: WebSocket) => {
    const write = (frame: string) => ws.send(frame)
    ws.on("message", () => {
      writers.add(write)
      ws.send(JSON.stringify({ type: "subscribed", channel: "triggers" }))
    })
    ws.on("close", () => writers.delete(write))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  // What the previous run's connections left behind is let go first.
  await pause(1000)
  const before = heap(`raw-${kind}-before`)
  const tokens = Array.from({ length: clients }, (_, i) => `t${i}`)
  const run = startClients(kind, kind === "sse" ? `http://127.0.0.1:${port}/` : `ws://127.0.0.1:${port}/`, tokens)
  await run.opened
  const during = heap(`raw-${kind}-during`)
  const published = new Map<number, number>()
  for (let id = 1; id <= triggers; id++) {
    const frame = kind === "sse"
      ? `event: update\nid: ${id}-2\ndata: ${JSON.stringify({ kind: "trigger", trigger: { id } })}\n\n`
      : JSON.stringify({ type: "event", channel: "triggers", data: { id } })
    published.set(id, now())
    for (const write of writers) write(frame)
    await pause(50)
  }
  const result = latencies(await run.arrivals([...published.keys()]), published)
  await run.stop()
  wss.close()
  server.closeAllConnections()
  server.close()
  return { bytesPerConnection: (during - before) / clients, ...result }
}

/**
 * The platform: one user with a session token per client (each token holds one stream); SSE
 * clients stream BTC, WebSocket clients subscribe to `triggers`; triggers come from the signal engine.
 */
const platform = Effect.gen(function*() {
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
  const tokens = Array.from({ length: 2 * clients }, () => `tps_${randomBytes(32).toString("base64url")}`)
  for (let i = 0; i < tokens.length; i += 1000) {
    const rows = tokens.slice(i, i + 1000).map((token) => ({
      user_id: login.user.id,
      token_hash: createHash("sha256").update(token).digest("hex"),
      created_at: new Date(),
      expires_at: new Date(Date.now() + 86_400_000)
    }))
    yield* sql`INSERT INTO sessions ${sql.insert(rows)}`
  }
  const signal = yield* Effect.promise(() =>
    post("/api/signals", {
      signal_name: "oi",
      trigger_condition: { metric: "oi", operator: "gt", threshold: 0, time_window: "1m" }
    }, login.session_token)
  )

  // A trigger counts from the end of the engine's round that fired it (its span's end, before the
  // new trigger is read back and published): a subscriber of the engine next to the hub's may be
  // scheduled after the hub has already written to every stream, so it cannot tell publication.
  let roundEnded = 0
  const native = yield* Effect.tracer
  const roundTracer = Tracer.make({
    context: native.context,
    span: (...args) => {
      const span = native.span(...args)
      if (args[0] !== "SignalEngine.round") return span
      const end = span.end.bind(span)
      return Object.assign(span, {
        end: (...endArgs: Parameters<Tracer.Span["end"]>) => {
          roundEnded = now()
          end(...endArgs)
        }
      })
    }
  })
  const published = new Map<number, number>()
  const seen = yield* engine.subscribe
  yield* Effect.forkScoped(Effect.forever(Effect.map(Queue.take(seen), (t) => published.set(t.id, roundEnded))))

  const symbols = ["BTC", "ETH", "SOL", "BNB", "XRP", "DOGE", "ADA", "AVAX", "LINK", "DOT"]
  let pools = 0
  const measure = (kind: Kind, url: string, tokens: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      published.clear()
      yield* Effect.promise(() => pause(1000))
      const before = heap(`${kind}-before`)
      const run = startClients(kind, url, tokens)
      yield* Effect.promise(() => run.opened)
      const during = heap(`${kind}-during`)
      for (let i = 0; i < triggers; i++) {
        // A new pool fires once on its first round.
        yield* Effect.promise(() =>
          post("/api/signals/pools", {
            pool_name: `p${pools++}`,
            signal_ids: [signal.id],
            symbols: [symbols[i % symbols.length]]
          }, login.session_token)
        )
        yield* engine.evaluateNow.pipe(Effect.withTracer(roundTracer), Effect.withTracerEnabled(true))
        yield* Effect.promise(() => pause(50))
      }
      const arrivals = yield* Effect.promise(() => run.arrivals([...published.keys()]))
      yield* Effect.promise(() => run.stop())
      return { bytesPerConnection: (during - before) / clients, ...latencies(arrivals, published) } satisfies Result
    })
  const sse = yield* measure("sse", `${base}/api/market-intelligence/stream?symbols=BTC`, tokens.slice(0, clients))
  const ws = yield* measure("ws", `ws://127.0.0.1:${port}/api/ws`, tokens.slice(clients))
  return { sse, ws }
})

const config = PlatformConfig.layer(platformOptions({
  storage: { kind: "pglite", dataDir: "memory://" },
  rateLimits: { ...rateLimitPolicyPerMinute({ auth: 1e9, read: 1e9, write: 1e9 }) },
  signals: { ...platformOptions().signals, sampler: false }
}))

// Served as `ServerLive` and `makeNodeHandler` serve: a request fiber's context holds only what a
// request needs, and without a tracer the platform's no-op request span is not made.
const Server = withRequestServices(HttpApiBuilder.serve(requestContext)).pipe(
  withoutRequestTracing,
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
  const rawSse = await rawBaseline("sse")
  const rawWs = await rawBaseline("ws")
  const streams = await Effect.runPromise(
    Effect.scoped(Effect.flatMap(Layer.build(Server), (context) => Effect.provide(platform, context)))
  )
  console.log(`${clients} clients of each kind, ${triggers} triggers each fanned out to all of them\n`)
  console.log("| server | deliveries | heap per connection | vs raw | p50 | p99 | p99 vs raw |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  console.log(row("raw node:http SSE fan-out", rawSse, rawSse))
  console.log(row("`GET /api/market-intelligence/stream` (SSE)", streams.sse, rawSse))
  console.log(row("raw `ws` WebSocket fan-out", rawWs, rawWs))
  console.log(row("`GET /api/ws` (WebSocket, `triggers`)", streams.ws, rawWs))
}
