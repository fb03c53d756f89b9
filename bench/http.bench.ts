// HTTP throughput of the reference server against a raw node:http baseline, in one process run.
// The load comes from a worker thread (its own event loop) holding 32 keep-alive connections.
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PGlite } from "@electric-sql/pglite"
import { PlatformConfig, PlatformLive, platformOptions, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { ApiLive, requestContext, ServerLive } from "@trading-platform/server"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { Worker } from "node:worker_threads"
import pg from "pg"
import { withFreshDatabase } from "./FreshDatabase.js"

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

/** A request the load repeats: a GET without a body unless told otherwise. */
interface Request {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

const load = (url: string, request: Request = {}) =>
  new Promise<Load>((resolve, reject) => {
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads")
      const http = require("node:http")
      const agent = new http.Agent({ keepAlive: true, maxSockets: workerData.connections })
      const { method = "GET", headers = {}, body } = workerData.request
      let done = 0, stop = false, measuring = false
      const latencies = []
      const one = () => {
        if (stop) return
        const sent = performance.now()
        http.request(workerData.url, { agent, method, headers }, (res) => {
          res.resume()
          res.on("end", () => {
            if (res.statusCode >= 300) throw new Error("status " + res.statusCode)
            done++
            if (measuring) latencies.push(performance.now() - sent)
            one()
          })
        }).on("error", (e) => { if (!stop) throw e }).end(body)
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
      { eval: true, workerData: { url, request, connections, ms: seconds * 1000, maxWarmUpMs } }
    )
    worker.once("message", (m: { count: number; p99: number }) => resolve({ rate: m.count / seconds, p99: m.p99 }))
    worker.once("error", reject)
  })

const limitsOff = rateLimitPolicyPerMinute({ auth: 1e9, read: 1e9, write: 1e9 })
const config = PlatformConfig.layer(
  platformOptions({ storage: { kind: "pglite", dataDir: "memory://" }, rateLimits: limitsOff })
)
const listen = { port: 0, host: "127.0.0.1" }

const rawBaseline = async () => {
  const body = JSON.stringify({ status: "ok", version: "0.1.0", storage: "pglite" })
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "x-request-id": crypto.randomUUID() }).end(body)
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const result = await load(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/health`)
  server.close()
  return result
}

/** The statements of the raw same-work servers, on a pooled `pg` or on PGlite. */
interface Db {
  readonly query: (text: string, params: Array<unknown>) => Promise<Array<any>>
  /** Runs `work` between BEGIN and COMMIT on one connection. */
  readonly transaction: <A>(work: (query: Db["query"]) => Promise<A>) => Promise<A>
}

const pgDb = (pool: pg.Pool): Db => ({
  query: (text, params) => pool.query(text, params).then((r) => r.rows),
  transaction: async (work) => {
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      const result = await work((text, params) => client.query(text, params).then((r) => r.rows))
      await client.query("COMMIT")
      return result
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {})
      throw e
    } finally {
      client.release()
    }
  }
})

const pgliteDb = (db: PGlite): Db => ({
  query: (text, params) => db.query<any>(text, params).then((r) => r.rows),
  transaction: (work) => db.transaction((tx) => work((text, params) => tx.query<any>(text, params).then((r) => r.rows)))
})

const iso = (d: Date | null) => d === null ? null : d.toISOString()

/**
 * The same work as the server's routes on raw node:http: hash the presented token, read the
 * session with its user, check it is neither revoked nor expired (touching `last_used_at` at most
 * once a minute); then the route's own statements (below, per route) and answer the rows.
 */
const rawServer = async (db: Db) => {
  const session = async (authorization: string | undefined) => {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1] ?? ""
    const hash = createHash("sha256").update(presented).digest("hex")
    const [s] = await db.query(
      "SELECT s.id, s.user_id, s.user_agent, s.created_at, s.last_used_at, s.expires_at, s.revoked_at, u.email, u.username, u.created_at AS user_created_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1",
      [hash]
    )
    if (!s || s.revoked_at !== null || s.expires_at.getTime() <= Date.now()) return undefined
    if (s.last_used_at === null || Date.now() - s.last_used_at.getTime() >= 60_000) {
      await db.query("UPDATE sessions SET last_used_at = $1 WHERE id = $2", [new Date(), s.id])
    }
    return s
  }
  const accountOf = ({ api_key_sealed, ...account }: any) => ({
    ...account,
    initial_capital: Number(account.initial_capital),
    current_cash: Number(account.current_cash),
    frozen_cash: Number(account.frozen_cash),
    has_api_key: api_key_sealed !== null,
    created_at: iso(account.created_at),
    updated_at: iso(account.updated_at)
  })
  const datesOf = (row: any) => ({ ...row, created_at: iso(row.created_at), updated_at: iso(row.updated_at) })
  // As the API answers them: without the owner, JSON columns parsed.
  const programOf = ({ user_id, ...row }: any) =>
    datesOf({ ...row, parameters: row.parameters === null ? null : JSON.parse(row.parameters) })
  const signalOf = ({ user_id, ...row }: any) =>
    datesOf({ ...row, trigger_condition: JSON.parse(row.trigger_condition) })
  const accountColumns =
    "accounts.*, EXISTS (SELECT 1 FROM venue_credentials c WHERE c.account_id = accounts.id AND c.venue = 'venue1') AS has_venue1_wallet, EXISTS (SELECT 1 FROM venue_credentials c WHERE c.account_id = accounts.id AND c.venue = 'venue2') AS has_venue2_keys"
  const update = (userId: number, id: number, input: Record<string, unknown>) =>
    db.transaction(async (query) => {
      const [row] = await query(`SELECT ${accountColumns} FROM accounts WHERE id = $1 FOR UPDATE`, [id])
      if (!row || row.user_id !== userId) return undefined
      const edit = { ...row, ...input }
      if (edit.default_leverage !== null && edit.default_leverage > (edit.max_leverage ?? 125)) return undefined
      const [next] = await query(
        "UPDATE accounts SET name = $1, is_active = $2, show_on_dashboard = $3, venue1_enabled = $4, avatar_preset_id = $5, base_url = $6, model = $7, default_leverage = $8, max_leverage = $9, venue1_environment = $10, api_key_sealed = $11, updated_at = $12 WHERE id = $13 RETURNING *",
        [
          edit.name,
          edit.is_active,
          edit.show_on_dashboard,
          edit.venue1_enabled,
          edit.avatar_preset_id,
          edit.base_url,
          edit.model,
          edit.default_leverage,
          edit.max_leverage,
          edit.venue1_environment,
          edit.api_key_sealed,
          new Date(),
          id
        ]
      )
      return accountOf(next)
    })
  /** Each route's own statements after the session read, by method and path. */
  const routes: Array<[string, RegExp, (s: any, match: RegExpExecArray, body: any) => Promise<unknown>]> = [
    [
      "GET",
      /^\/api\/users\/me$/,
      async (s) => ({ id: s.user_id, email: s.email, username: s.username, created_at: iso(s.user_created_at) })
    ],
    [
      "GET",
      /^\/api\/account\/list$/,
      async (s) =>
        (await db.query(`SELECT ${accountColumns} FROM accounts WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, [
          s.user_id,
          50,
          0
        ])).map(accountOf)
    ],
    ["PUT", /^\/api\/account\/(\d+)$/, (s, m, body) => update(s.user_id, Number(m[1]), body)],
    ["GET", /^\/api\/programs\/(\d+)$/, async (s, m) => {
      const [row] = await db.query("SELECT * FROM programs WHERE id = $1", [Number(m[1])])
      return row && row.user_id === s.user_id ? programOf(row) : undefined
    }],
    ["GET", /^\/api\/programs\/backtest\/(\d+)$/, async (s, m) => {
      const [row] = await db.query(
        "SELECT id, user_id, program_id, account_id, symbol, symbols, exchange, timeframe, timeframes, start_at, end_at, initial_balance, fee_rate, maker_fee_rate, slippage, slippage_model, fill_timing, margin_mode, leverage, warmup_bars, params, status, progress, attempts, lease_until, claimed_by, error, result, total_pnl, total_trades, winning_trades, created_at, started_at, finished_at FROM backtests WHERE id = $1",
        [Number(m[1])]
      )
      if (!row || row.user_id !== s.user_id) return undefined
      const result = row.result === null ? null : JSON.parse(row.result)
      return {
        id: row.id,
        status: row.status,
        account_id: row.account_id,
        program_id: row.program_id,
        symbol: row.symbol,
        symbols: JSON.parse(row.symbols),
        exchange: row.exchange,
        timeframe: row.timeframe,
        timeframes: JSON.parse(row.timeframes),
        params: JSON.parse(row.params),
        created_at: iso(row.created_at),
        started_at: iso(row.started_at),
        finished_at: iso(row.finished_at),
        total_pnl: row.total_pnl === null ? null : Number(row.total_pnl),
        total_trades: row.total_trades,
        win_rate: row.total_trades === null ? null : row.total_trades === 0 ? 0 : row.winning_trades / row.total_trades,
        start: iso(row.start_at),
        end: iso(row.end_at),
        initial_balance: Number(row.initial_balance),
        fee_rate: row.fee_rate,
        maker_fee_rate: row.maker_fee_rate,
        slippage: row.slippage,
        slippage_model: row.slippage_model,
        fill_timing: row.fill_timing,
        margin_mode: row.margin_mode,
        leverage: row.leverage,
        warmup_bars: row.warmup_bars,
        warmed_up_bars: result?.warmed_up_bars ?? null,
        progress: row.progress,
        attempts: row.attempts,
        error: row.error,
        metrics: result?.metrics ?? null,
        per_symbol: result?.per_symbol ?? [],
        final_balance: result?.final_balance ?? null,
        equity_curve: result?.equity_curve ?? [],
        trades: result?.trades ?? [],
        fills: result?.fills ?? []
      }
    }],
    ["GET", /^\/api\/signals$/, async (s) => {
      const pools = await db.query(
        "SELECT p.*, array_to_string(ARRAY(SELECT m.signal_id FROM signal_pool_members m WHERE m.pool_id = p.id ORDER BY m.position), ',') AS signal_ids FROM signal_pools p WHERE p.user_id = $1 ORDER BY p.id",
        [s.user_id]
      )
      const signals = await db.query("SELECT * FROM signals WHERE user_id = $1 ORDER BY id", [s.user_id])
      return { signals: signals.map(signalOf), pools: pools.map(datesOf) }
    }],
    ["POST", /^\/api\/signals$/, async (s, _, body) => {
      const now = new Date()
      const [row] = await db.query(
        "INSERT INTO signals (user_id, exchange, signal_name, description, trigger_condition, enabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *",
        [s.user_id, "venue1", body.signal_name, null, JSON.stringify(body.trigger_condition), body.enabled, now, now]
      )
      return signalOf(row)
    }]
  ]
  const server = createServer((req, res) => {
    const answer = (body: unknown) =>
      body === undefined
        ? void res.writeHead(404).end()
        : void res.writeHead(200, { "content-type": "application/json", "x-request-id": crypto.randomUUID() })
          .end(JSON.stringify(body))
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c)).on("end", () =>
      session(req.headers.authorization).then(async (s) => {
        if (!s) return void res.writeHead(401).end()
        for (const [method, path, work] of routes) {
          const match = req.method === method ? path.exec(req.url ?? "") : null
          if (match) {
            return answer(
              await work(s, match, chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined)
            )
          }
        }
        res.writeHead(404).end()
      }).catch(() => res.destroy()) // requests still in flight when the load stops meet an ended pool
    )
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
}

const post = (base: string, path: string, body: unknown, token?: string) =>
  fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  }).then((r) => r.json())

/** Registers and logs in a fresh user; its session token. */
const sessionToken = (base: string) => {
  const user = { email: "bench@example.com", password: "bench password", username: "bench" }
  return post(base, "/api/users/register", user)
    .then(() => post(base, "/api/users/login", { email: user.email, password: user.password }))
    .then((login: { session_token: string }) => login.session_token)
}

/** What the authenticated scenarios read and write: the caller's token, account and program. */
interface Fixture {
  readonly token: string
  readonly accountId: number
  readonly programId: number
  /** A completed backtest of the program: a week of hourly bars. */
  readonly backtestId: number
}

/** A scenario: its row's name, and the request both servers are loaded with. */
interface Scenario {
  readonly name: string
  readonly path: (f: Fixture) => string
  readonly request: (f: Fixture) => Request
}
const bearer = (f: Fixture) => ({ authorization: `Bearer ${f.token}` })
const get = (name: string, path: (f: Fixture) => string): Scenario => ({
  name,
  path,
  request: (f) => ({ headers: bearer(f) })
})
const reads: ReadonlyArray<Scenario> = [
  get("`GET /api/users/me`", () => "/api/users/me"),
  // An Origin header (CORS is off) sends the read past the fast lane, down the platform's full path.
  {
    name: "`GET /api/users/me`, the full path (not the fast lane)",
    path: () => "/api/users/me",
    request: (f) => ({ headers: { ...bearer(f), origin: "https://bench.example.com" } })
  },
  get("`GET /api/programs/{id}`", (f) => `/api/programs/${f.programId}`),
  get("`GET /api/account/list`", () => "/api/account/list"),
  get("`GET /api/programs/backtest/{id}`", (f) => `/api/programs/backtest/${f.backtestId}`),
  get("`GET /api/signals`", () => "/api/signals")
]
const trigger = { metric: "price_change", operator: "gt", threshold: 2, time_window: "1h" }
// After the reads: each POST adds a signal, which `GET /api/signals` would then read.
const writes: ReadonlyArray<Scenario> = [
  {
    name: "`PUT /api/account/{id}`",
    path: (f) => `/api/account/${f.accountId}`,
    request: (f) => ({
      method: "PUT",
      headers: { ...bearer(f), "content-type": "application/json" },
      body: JSON.stringify({ name: "bench, renamed", default_leverage: 3 })
    })
  },
  {
    name: "`POST /api/signals`",
    path: () => "/api/signals",
    request: (f) => ({
      method: "POST",
      headers: { ...bearer(f), "content-type": "application/json" },
      body: JSON.stringify({
        signal_name: "bench",
        enabled: false,
        trigger_condition: trigger
      })
    })
  }
]
const readOf = (f: Fixture): [string, Request] => [reads[0]!.path(f), reads[0]!.request(f)]

/** Runs `use` against a server layer, with its base URL. */
const serving = <A>(server: Layer.Layer<HttpServer.HttpServer, unknown>, use: (base: string) => Promise<A>) =>
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    return yield* Effect.promise(() => use(`http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`))
  }).pipe(Effect.provide(server), Effect.scoped, Effect.runPromise)

/** A user with a token, an account and a program, made through the server at `base`. */
const makeFixture = async (base: string): Promise<Fixture> => {
  const token = await sessionToken(base)
  const account = await post(base, "/api/account", { name: "bench", default_leverage: 2, max_leverage: 10 }, token)
  const program = await post(base, "/api/programs", {
    name: "bench",
    code: "export function decide(data) {\n  return { operation: \"hold\" }\n}\n"
  }, token)
  await post(base, "/api/signals", { signal_name: "bench", enabled: false, trigger_condition: trigger }, token)
  const backtest = await post(base, `/api/programs/${program.id}/backtest`, {
    symbol: "BTC",
    timeframe: "1h",
    start: "2025-06-01T00:00:00Z",
    end: "2025-06-08T00:00:00Z"
  }, token)
  for (;;) {
    const { status } = await fetch(`${base}/api/programs/backtest/${backtest.id}`, {
      headers: { authorization: `Bearer ${token}` }
    }).then((r) => r.json())
    if (status === "completed") break
    if (status !== "queued" && status !== "running") throw new Error(`the fixture's backtest ended ${status}`)
    await new Promise((r) => setTimeout(r, 200))
  }
  return { token, accountId: account.id as number, programId: program.id as number, backtestId: backtest.id as number }
}

/** A scenario's median round on the server and on the raw same-work server. */
interface Compared {
  readonly name: string
  readonly server: Load
  readonly raw: Load
}

// The machine's speed drifts over a run (other processes, CPU frequency), so the server and its
// raw same-work baseline are loaded in alternating rounds and each keeps its median round.
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const median = (loads: Array<Load>) => [...loads].sort((a, b) => a.rate - b.rate)[Math.floor(loads.length / 2)]!

/** Every scenario on the server at `base` and on the raw same-work server at `raw`, alternating. */
const alternating = async (base: string, raw: string, fixture: Fixture): Promise<Array<Compared>> => {
  const results: Array<Compared> = []
  // Same work means the same answer: each read's body from both servers, compared once.
  for (const scenario of reads) {
    const [ours, theirs] = await Promise.all(
      [base, raw].map((at) => fetch(at + scenario.path(fixture), scenario.request(fixture)).then((r) => r.json()))
    )
    if (!isDeepStrictEqual(ours, theirs)) {
      const keys = Object.keys({ ...ours, ...theirs }).filter((k) => !isDeepStrictEqual(ours[k], theirs[k]))
      console.log(`(the raw server's answer to ${scenario.name} differs from the server's at ${keys.join(", ")})`)
    }
  }
  for (const phase of [reads, writes]) {
    const loads = phase.map(() => ({ server: [] as Array<Load>, raw: [] as Array<Load> }))
    for (let round = 0; round < rounds; round++) {
      for (const [i, scenario] of phase.entries()) {
        const path = scenario.path(fixture)
        loads[i]!.server.push(await load(base + path, scenario.request(fixture)))
        loads[i]!.raw.push(await load(raw + path, scenario.request(fixture)))
      }
    }
    phase.forEach((scenario, i) =>
      results.push({ name: scenario.name, server: median(loads[i]!.server), raw: median(loads[i]!.raw) })
    )
  }
  return results
}

/** The scenarios against a raw same-work server on `db`, running while `use` does. */
const withRawServer = async <A>(db: Db, use: (raw: string) => Promise<A>) => {
  const { base, close } = await rawServer(db)
  try {
    return await use(base)
  } finally {
    close()
  }
}

/** Throughput of `path` on a server layer, with a fresh user's token. */
const measure = (server: Layer.Layer<HttpServer.HttpServer, unknown>, path: string, authenticated: boolean) =>
  serving(
    server,
    async (base) =>
      load(base + path, authenticated ? { headers: { authorization: `Bearer ${await sessionToken(base)}` } } : {})
  )

const compared = (title: string, rows: Array<Compared>) => {
  console.log(`\n${title}, ${connections} connections, median of ${rounds} alternating rounds\n`)
  console.log(
    "| scenario | server req/s | p99 ms | raw same work req/s | p99 ms | ratio |\n|---|---:|---:|---:|---:|---:|"
  )
  for (const { name, raw: r, server: s } of rows) {
    console.log(
      `| ${name} | ${Math.round(s.rate)} | ${s.p99.toFixed(0)} | ${Math.round(r.rate)} | ${r.p99.toFixed(0)} | ${
        (s.rate / r.rate).toFixed(2)
      } |`
    )
  }
}

export const run = async () => {
  const reference = ServerLive(listen).pipe(Layer.provide(config))
  // The same server without the tracer switch: what Effect's tracer costs.
  const traced = HttpApiBuilder.serve(requestContext).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, listen)),
    Layer.provide(ApiLive),
    Layer.provide(PlatformLive),
    Layer.provide(config)
  )
  // BENCH_HTTP_SAME_WORK_ONLY=1 runs only the same-work comparisons below.
  if (process.env["BENCH_HTTP_SAME_WORK_ONLY"] !== "1") {
    const raw = await rawBaseline()
    const rows: Array<[string, Load]> = [
      ["raw node:http, static JSON (baseline)", raw],
      ["GET /api/health (rate limit, request id, SELECT 1)", await measure(reference, "/api/health", false)],
      ["GET /api/users/me (rate limit, token lookup)", await measure(reference, "/api/users/me", true)],
      ["GET /api/users/me with Effect's tracer on", await measure(traced, "/api/users/me", true)]
    ]
    console.log(
      `${connections} keep-alive connections from a worker thread, ${seconds} s each after warming up until steady\n`
    )
    console.log("| scenario | requests/s | p99 ms | vs baseline |\n|---|---:|---:|---:|")
    for (const [name, { p99, rate }] of rows) {
      console.log(`| ${name} | ${Math.round(rate)} | ${p99.toFixed(0)} | ${(rate / raw.rate).toFixed(2)} |`)
    }
  }

  // PGlite in a data directory. PGlite is one process's, so once the server has made the user, the
  // raw server opens a copy of the directory, and both serve side by side.
  const dataDir = mkdtempSync(join(tmpdir(), "tp-bench-"))
  const rawDir = `${dataDir}-raw`
  try {
    const pgliteServer = ServerLive(listen).pipe(Layer.provide(PlatformConfig.layer(platformOptions({
      storage: { kind: "pglite", dataDir },
      rateLimits: limitsOff
    }))))
    const fixture = await serving(pgliteServer, makeFixture)
    cpSync(dataDir, rawDir, { recursive: true })
    const db = await PGlite.create(rawDir)
    const pglite = await serving(
      pgliteServer,
      (base) => withRawServer(pgliteDb(db), (raw) => alternating(base, raw, fixture))
    )
    await db.close()
    compared("PGlite (a data directory), against raw node:http + PGlite doing the same statements", pglite)
    // The same read with the background work off (job workers, schedulers, sampler, fetcher, purges):
    // what they take from the requests on the one thread and the one embedded connection.
    const defaults = platformOptions()
    const quiet = await serving(
      ServerLive(listen).pipe(Layer.provide(PlatformConfig.layer(platformOptions({
        storage: { kind: "pglite", dataDir },
        rateLimits: limitsOff,
        backtests: { ...defaults.backtests, concurrency: 0 },
        automation: { ...defaults.automation, enabled: false, concurrency: 0 },
        assistant: { ...defaults.assistant, insightJobs: { ...defaults.assistant.insightJobs, concurrency: 0 } },
        signals: { ...defaults.signals, sampler: false },
        retention: { ...defaults.retention, purgeInterval: Duration.days(365) },
        news: { ...defaults.news, fetchInterval: Duration.days(365) }
      })))),
      (base) => load(base + readOf(fixture)[0], readOf(fixture)[1])
    )
    console.log(
      `| \`GET /api/users/me\`, background work off (one round) | ${Math.round(quiet.rate)} | ${
        quiet.p99.toFixed(0)
      } | ${Math.round(pglite[0]!.raw.rate)} | ${pglite[0]!.raw.p99.toFixed(0)} | ${
        (quiet.rate / pglite[0]!.raw.rate).toFixed(2)
      } |`
    )
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(rawDir, { recursive: true, force: true })
  }

  const postgresUrl = process.env["TEST_DATABASE_URL"]
  if (postgresUrl) {
    // PostgreSQL: the server and the raw same-work server on the same database, side by side
    // (pg's default pool of 10, as the server's).
    await withFreshDatabase(postgresUrl, async (url) => {
      const pool = new pg.Pool({ connectionString: url })
      // Dropping the bench database ends connections still held by requests in flight when the load stopped.
      pool.on("error", () => {})
      const postgres = await serving(
        ServerLive(listen).pipe(Layer.provide(PlatformConfig.layer(platformOptions({
          storage: { kind: "postgres", url: Redacted.make(url) },
          secretKey: Option.some(Redacted.make("bench-secret-key-0123456789abcdef0123456789")),
          rateLimits: limitsOff
        })))),
        async (base) => withRawServer(pgDb(pool), async (raw) => alternating(base, raw, await makeFixture(base)))
      )
      await pool.end()
      compared("PostgreSQL, against raw node:http + pooled pg doing the same statements", postgres)
    })
  }
  console.log(`\nrss after the runs: ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB`)
}
