// Load test: mixed reads and writes from many tokens against one server process on PostgreSQL.
// Checks zero 5xx, zero lost writes (every 2xx write is in the database afterwards) and 429s only
// where the limits allow; prints throughput, latency percentiles and the status counts.
// BENCH_DATABASE_URL (or TEST_DATABASE_URL) names the PostgreSQL server; a fresh database is made
// on it and dropped afterwards. LOAD_SECONDS (60), LOAD_TOKENS (200), LOAD_CONNECTIONS (64),
// LOAD_READ_LIMIT (60) and LOAD_WRITE_LIMIT (20) per token per minute.
import { randomBytes } from "node:crypto"
import pg from "pg"
import { startServer } from "./ServerProcess.js"

const adminUrl = process.env["BENCH_DATABASE_URL"] ?? process.env["TEST_DATABASE_URL"]
const seconds = Number(process.env["LOAD_SECONDS"] ?? 60)
const tokens = Number(process.env["LOAD_TOKENS"] ?? 200)
const connections = Number(process.env["LOAD_CONNECTIONS"] ?? 64)
// Per token and minute; low enough that some tokens hit them, to check the 429s.
const readLimit = Number(process.env["LOAD_READ_LIMIT"] ?? 60)
const writeLimit = Number(process.env["LOAD_WRITE_LIMIT"] ?? 20)
const windowMs = 60_000

interface Sent {
  readonly at: number
  readonly done: number
  readonly limited: boolean
}

interface Caller {
  readonly ip: string
  readonly token: string
  /** Every request, per category: when it was sent and answered, and whether it was refused (429). */
  readonly sent: { read: Array<Sent>; write: Array<Sent> }
}

const request = async (
  base: string,
  caller: Pick<Caller, "ip"> & { token?: string },
  method: string,
  path: string,
  body?: unknown
) => {
  const headers: Record<string, string> = { "x-forwarded-for": caller.ip }
  if (caller.token) headers["authorization"] = `Bearer ${caller.token}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const started = performance.now()
  const reply = await fetch(base + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await reply.text()
  return { status: reply.status, body: text === "" ? undefined : JSON.parse(text), ms: performance.now() - started }
}

const percentile = (sorted: Array<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

export const run = async () => {
  if (!adminUrl) {
    console.log("SKIPPED: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server")
    return
  }
  const name = `tp_load_${randomBytes(6).toString("hex")}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  let stop = async () => {}
  try {
    const server = await startServer({
      DATABASE_URL: url.toString(),
      SECRET_KEY: randomBytes(32).toString("hex"),
      TRUST_PROXY: "true",
      RATE_LIMIT_AUTH_PER_MIN: String(tokens * 2),
      RATE_LIMIT_READ_PER_MIN: String(readLimit),
      RATE_LIMIT_WRITE_PER_MIN: String(writeLimit),
      BACKTEST_CONCURRENCY: "0"
    })
    stop = server.stop
    const base = server.base
    // One user, token and client IP each (the limits count per token and per IP alike).
    const callers: Array<Caller> = []
    for (let i = 0; i < tokens; i++) {
      const ip = `10.1.${Math.floor(i / 250)}.${i % 250}`
      const user = { email: `load${i}@example.com`, username: `load_${i}`, password: "a long enough password" }
      await request(base, { ip }, "POST", "/api/users/register", user)
      const login = await request(base, { ip }, "POST", "/api/users/login", {
        email: user.email,
        password: user.password
      })
      callers.push({ ip, token: login.body.session_token, sent: { read: [], write: [] } })
    }

    const statuses = new Map<number, number>()
    const latencies: Array<number> = []
    const written = new Map<number, string>()
    const started = Date.now()
    const end = started + seconds * 1000
    let writes = 0
    const loop = async () => {
      while (Date.now() < end) {
        const caller = callers[Math.floor(Math.random() * callers.length)]!
        const write = Math.random() < 0.3
        const category = write ? "write" : "read"
        const sentAt = Date.now()
        const label = `load ${writes++}`
        const reply = write
          ? await request(base, caller, "POST", "/api/account", { name: label })
          : await request(base, caller, "GET", Math.random() < 0.5 ? "/api/account/list" : "/api/users/me")
        latencies.push(reply.ms)
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
        if (reply.status < 400 || reply.status === 429) {
          caller.sent[category].push({ at: sentAt, done: Date.now(), limited: reply.status === 429 })
        }
        if (write && reply.status === 201) written.set(reply.body.id, label)
      }
    }
    await Promise.all(Array.from({ length: connections }, loop))
    const elapsed = (Date.now() - started) / 1000

    // Every write answered 2xx must be in the database.
    const db = new pg.Client({ connectionString: url.toString() })
    await db.connect()
    const rows = (await db.query("SELECT id, name FROM accounts")).rows as Array<{ id: number; name: string }>
    await db.end()
    const stored = new Map(rows.map((r) => [r.id, r.name]))
    const lost = [...written].filter(([id, label]) => stored.get(id) !== label).length
    // A 429 is premature when fewer than `limit` requests of that token and category may have been
    // counted before it in its minute: those sent before it was answered and answered after the
    // minute before it was sent. Each accepted request adds window/limit to its key's window and
    // windows do not overlap, so over the run no token may have more than
    // limit x (run + one window) / window accepted.
    const premature: Array<string> = []
    let over = 0
    for (const c of callers) {
      for (const category of ["read", "write"] as const) {
        const limit = category === "read" ? readLimit : writeLimit
        const all = c.sent[category]
        const accepted = all.filter((x) => !x.limited)
        for (const refused of all.filter((x) => x.limited)) {
          const counted = accepted.filter((x) => x.at <= refused.done && x.done >= refused.at - windowMs).length
          if (counted < limit) premature.push(`${c.ip} ${category}: 429 with ${counted} counted`)
        }
        if (accepted.length > (limit * (elapsed * 1000 + windowMs)) / windowMs) over++
      }
    }

    const sorted = latencies.sort((a, b) => a - b)
    const total = latencies.length
    const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0)
    console.log(
      `${tokens} tokens, ${connections} concurrent requests, ${
        elapsed.toFixed(0)
      } s, 70% reads / 30% writes, limits ${readLimit} reads and ${writeLimit} writes per token per minute\n`
    )
    console.log(
      "| requests | requests/s | p50 ms | p99 ms | 5xx | writes answered 201 | lost writes | premature 429s | tokens over limit |"
    )
    console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    console.log(
      `| ${total} | ${Math.round(total / elapsed)} | ${percentile(sorted, 50).toFixed(1)} | ${
        percentile(sorted, 99).toFixed(1)
      } | ${fivexx} | ${written.size} | ${lost} | ${premature.length} | ${over} |`
    )
    console.log(`\nstatuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
    if (premature.length > 0) console.log(`first premature 429s: ${premature.slice(0, 5).join("; ")}`)
    if (fivexx > 0 || lost > 0 || over > 0 || premature.length > 0) process.exitCode = 1
  } finally {
    await stop()
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
