// Stalls: how long the server's event loop is held while one user's largest requests run. A probe
// reads `GET /api/health` every 5 ms from the bench process; its latency is the delay any other
// user's request would meet. Each heavy request (the largest history export, a 10,000-row import,
// a ranking table computed afresh) is measured side by side with the same probe against the same
// server idle, in the same run. One server process on embedded storage (PGlite, as `npm start`).
// STALL_ROWS (90000) sets the history's decision logs.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServer } from "./ServerProcess.js"

const rows = Number(process.env["STALL_ROWS"] ?? 90_000)

const percentile = (sorted: Array<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** Probes the server until `work` settles; answers the probe latencies (ms) and the work's own time. */
const probeDuring = async (base: string, work: () => Promise<unknown>) => {
  const latencies: Array<number> = []
  let done = false
  const probe = async () => {
    while (!done) {
      const started = performance.now()
      await fetch(`${base}/api/health`).then((r) => r.text())
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  const probing = probe()
  const started = performance.now()
  await work()
  const took = performance.now() - started
  done = true
  await probing
  return { latencies: latencies.sort((a, b) => a - b), took }
}

export const run = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tp-stalls-"))
  const { base, stop } = await startServer({
    DATA_DIR: dataDir,
    RATE_LIMIT_READ_PER_MIN: "1000000",
    RATE_LIMIT_WRITE_PER_MIN: "1000000",
    BACKTEST_CONCURRENCY: "0",
    SIGNAL_SAMPLER: "false",
    AUTOMATION_ENABLED: "false"
  })
  try {
    const send = async (method: string, path: string, body?: unknown, token?: string) => {
      const reply = await fetch(base + path, {
        method,
        headers: {
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {})
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
      const text = await reply.text()
      if (reply.status >= 400) throw new Error(`${method} ${path}: ${reply.status} ${text.slice(0, 200)}`)
      return text
    }
    const user = { email: "stalls@example.com", username: "stalls", password: "a long enough password" }
    await send("POST", "/api/users/register", user)
    const login = { email: user.email, password: user.password }
    const token = JSON.parse(await send("POST", "/api/users/login", login)).session_token as string
    const account = JSON.parse(await send("POST", "/api/account", { name: "history" }, token)).id as number
    const hour = 3_600_000
    const batch = (from: number) => ({
      version: "1.0",
      trades: [],
      decision_logs: Array.from({ length: 10_000 }, (_, i) => ({
        decision_time: new Date(Date.UTC(2010, 0, 1) + (from + i) * hour).toISOString(),
        symbol: "BTC",
        operation: "hold"
      }))
    })
    for (let from = 0; from < rows - 10_000; from += 10_000) {
      await send("POST", `/api/trader/${account}/import`, batch(from), token)
    }

    const scenarios: Array<[string, () => Promise<unknown>]> = [
      [
        `import 10,000 rows (history of ${rows})`,
        () => send("POST", `/api/trader/${account}/import`, batch(rows - 10_000), token)
      ],
      [`export ${rows} rows`, () => send("GET", `/api/trader/${account}/export`, undefined, token)],
      ["ranking table, computed afresh", () => send("GET", "/api/ranking/table?exchange=venue2", undefined, token)]
    ]
    console.log("| while | its own time (s) | probe p50 ms | probe p99 ms | probe max ms | idle p99 ms | p99 / idle |")
    console.log("|---|---:|---:|---:|---:|---:|---:|")
    for (const [name, work] of scenarios) {
      const idle = await probeDuring(base, () => new Promise((resolve) => setTimeout(resolve, 2_000)))
      const busy = await probeDuring(base, work)
      const idleP99 = percentile(idle.latencies, 99)
      const busyP99 = percentile(busy.latencies, 99)
      console.log(
        `| ${name} | ${(busy.took / 1000).toFixed(2)} | ${percentile(busy.latencies, 50).toFixed(1)} | ${
          busyP99.toFixed(1)
        } | ${(busy.latencies.at(-1) ?? 0).toFixed(1)} | ${idleP99.toFixed(1)} | ${(busyP99 / idleP99).toFixed(1)} |`
      )
    }
  } finally {
    await stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
