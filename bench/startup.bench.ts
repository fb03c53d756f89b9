// Start to healthy and idle resident memory of the server process, as a user starts it: `npm start`
// (the sources bundled into a cache by `scripts/start.mjs`), the built server (`node
// packages/server/dist/main.js` and the `trading-platform serve` command, after `npm run build`),
// and for comparison tsx compiling the sources at every start (what `npm start` was, and how the
// tests start the server). Each starts on a new data directory, then restarts on the same one five
// times (the median is reported); after the last restart it serves 10,000 `GET /api/users/me` and
// idles again. Resident memory is read from /proc (Linux), as the largest process of the started
// tree: the server, not npm or tsx's launcher.
// Then the idle CPU of `npm start`'s server over IDLE_CPU_SECONDS (60), new and with IDLE_CPU_USERS
// (1,000; 0 leaves that row out) users' signals.
// STARTUP_BASELINE=<path of another build's main.js> adds a row for it, to compare in the same run.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { createServer } from "node:net"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleServer } from "../packages/server/bundle.config.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const built = join(root, "packages/server/dist/main.js")
const cli = join(root, "packages/server/dist/cli.js")
// Resident memory is read once the process has idled this long (timers and the first GCs have run).
const idleMs = 5_000
const requests = 10_000
const restartCount = 5
const idleCpuSeconds = Number(process.env["IDLE_CPU_SECONDS"] ?? 60)
const idleCpuUsers = Number(process.env["IDLE_CPU_USERS"] ?? 1_000)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Resident MiB of the largest process in the tree under `pid`. */
const residentMiB = (pid: number) => {
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // the process ended meanwhile
    }
  }
  let largest = 0
  const visit = (p: number) => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0)
      largest = Math.max(largest, kb / 1024)
    } catch {
      // the process ended meanwhile
    }
    for (const [child, parent] of parents) if (parent === p) visit(child)
  }
  visit(pid)
  return Math.round(largest)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU ticks (user and system, of 1/100 s on Linux) used so far by every process in the tree under `pid`. */
const cpuTicks = (pid: number) => {
  const stats = new Map<number, { parent: number; ticks: number }>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      stats.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // the process ended meanwhile
    }
  }
  const sum = (p: number): number =>
    (stats.get(p)?.ticks ?? 0) +
    [...stats].reduce((total, [child, { parent }]) => total + (parent === p ? sum(child) : 0), 0)
  return sum(pid)
}

/** Spawns the server; resolves with the process and the milliseconds until `/api/health` answered 200. */
const start = async (command: Array<string>, dataDir: string, port: number) => {
  const started = performance.now()
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    detached: true, // its own process group, so npm, tsx and the server stop together
    // The server's stderr is kept (its last 4 KB), to say why it stopped if it does.
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      RATE_LIMIT_AUTH_PER_MIN: "1000000",
      RATE_LIMIT_READ_PER_MIN: "1000000",
      RATE_LIMIT_WRITE_PER_MIN: "1000000"
    }
  })
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4096)
  })
  const deadline = started + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(" ")} exited with ${child.exitCode}`)
    if (performance.now() > deadline) throw new Error(`${command.join(" ")} was not healthy within 120 s`)
    const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status === 200, () => false)
    if (ok) return { child, healthyMs: Math.round(performance.now() - started), stderr: () => stderr }
    await sleep(5)
  }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    process.kill(-child.pid!, "SIGTERM")
  })

/** `count` authenticated reads over 32 keep-alive connections. */
const reads = async (base: string, count: number) => {
  const user = { email: "startup@example.com", password: "startup password", username: "startup" }
  const post = (path: string, body: unknown) =>
    fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  await post("/api/users/register", user)
  // Login takes no other field (the contract is strict).
  const login = await post("/api/users/login", { email: user.email, password: user.password })
  const { session_token } = await login.json() as { session_token: string }
  const agent = new Agent({ keepAlive: true, maxSockets: 32 })
  let left = count
  const one = (): Promise<void> =>
    left-- <= 0 ? Promise.resolve() : new Promise<void>((resolve, reject) => {
      request(`${base}/api/users/me`, { agent, headers: { authorization: `Bearer ${session_token}` } }, (res) => {
        res.resume().on("end", () => res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)))
      }).on("error", reject).end()
    }).then(one)
  await Promise.all(Array.from({ length: 32 }, one))
  agent.destroy()
}

const measure = async (name: string, command: Array<string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "tp-startup-"))
  const port = await freePort()
  try {
    const first = await start(command, dataDir, port)
    await sleep(idleMs)
    const firstRss = residentMiB(first.child.pid!)
    await stop(first.child)
    // Restarts vary by a tenth on a shared machine: the median of several is reported.
    const restarts: Array<number> = []
    for (let i = 1; i < restartCount; i++) {
      const restart = await start(command, dataDir, port)
      restarts.push(restart.healthyMs)
      await stop(restart.child)
    }
    const again = await start(command, dataDir, port)
    restarts.push(again.healthyMs)
    await sleep(idleMs)
    const againRss = residentMiB(again.child.pid!)
    await reads(`http://127.0.0.1:${port}`, requests)
    await sleep(idleMs)
    const loadedRss = residentMiB(again.child.pid!)
    await stop(again.child)
    console.log(
      `| ${name} | ${first.healthyMs} | ${firstRss} | ${median(restarts)} (${Math.min(...restarts)}–${
        Math.max(...restarts)
      }) | ${againRss} | ${loadedRss} |`
    )
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** `count` users, each with one enabled signal and a pool watching one symbol with it. */
const signalUsers = async (base: string, count: number) => {
  const symbols = ["BTC", "ETH", "SOL"]
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(base + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body)
    })
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
    return response.json() as Promise<Record<string, any>>
  }
  let next = 0
  const one = async (): Promise<void> => {
    const i = next++
    if (i >= count) return
    const user = { email: `signals${i}@example.com`, password: "signals password", username: `signals${i}` }
    await post("/api/users/register", user)
    const { session_token } = await post("/api/users/login", { email: user.email, password: user.password })
    const signal = await post("/api/signals", {
      signal_name: "bids heavier",
      trigger_condition: { metric: "depth_ratio", operator: "gt", threshold: 1, time_window: "1m" }
    }, session_token)
    await post("/api/signals/pools", {
      pool_name: "watch",
      symbols: [symbols[i % symbols.length]],
      signal_ids: [signal["id"]]
    }, session_token)
    return one()
  }
  await Promise.all(Array.from({ length: 8 }, one))
}

/**
 * The server's CPU while nothing asks it anything, over `idleCpuSeconds` (after its background
 * work has started): on a new data directory, then after 1,000 users each set up a signal watched
 * by a pool (the signal engine then samples three symbols every round and evaluates 1,000 pools).
 */
const idleCpu = async (name: string, command: Array<string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "tp-idle-"))
  const port = await freePort()
  const over = async () => {
    await sleep(idleMs)
    const before = cpuTicks(server.child.pid!)
    await sleep(idleCpuSeconds * 1000)
    const ticks = cpuTicks(server.child.pid!) - before
    return `${ticks} | ${(ticks / idleCpuSeconds).toFixed(2)}%`
  }
  const server = await start(command, dataDir, port)
  try {
    const fresh = await over()
    console.log(`| ${name} | new data directory, nothing configured | ${fresh} |`)
    if (idleCpuUsers === 0) return
    const setup = performance.now()
    await signalUsers(`http://127.0.0.1:${port}`, idleCpuUsers).catch((e) => {
      throw new Error(
        `setting up the users failed (the server ${
          server.child.exitCode === null && server.child.signalCode === null
            ? "still runs"
            : `exited with ${server.child.exitCode ?? server.child.signalCode}`
        }; its stderr ends: ${server.stderr().slice(-1000) || "nothing"})`,
        { cause: e }
      )
    })
    const setupS = ((performance.now() - setup) / 1000).toFixed(0)
    console.log(
      `| ${name} | ${
        idleCpuUsers.toLocaleString("en")
      } users with one enabled signal and pool each (set up in ${setupS} s) | ${await over()} |`
    )
  } finally {
    await stop(server.child)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export const run = async () => {
  // `npm start` bundles the sources when they changed since its last start (`scripts/start.mjs`):
  // timed here on its own, then done for the current sources, so the rows below measure starts.
  mkdirSync(join(root, "node_modules/.cache"), { recursive: true })
  const scratch = mkdtempSync(join(root, "node_modules/.cache/startup-bench-"))
  const bundling = performance.now()
  await bundleServer(scratch)
  console.log(
    `Bundling the sources, as \`npm start\` does after a change: ${Math.round(performance.now() - bundling)} ms\n`
  )
  rmSync(scratch, { recursive: true, force: true })
  const warm = spawn("npm", ["start", "--silent", "--", "--version"], { cwd: root, stdio: "ignore" })
  await new Promise((resolve) => warm.once("exit", resolve))
  console.log(
    "| server | new data dir: ms to healthy | idle MiB | existing data dir: ms to healthy, " +
      `median of ${restartCount} (range) | idle MiB | ` +
      `idle MiB after ${requests} requests |\n|---|---:|---:|---:|---:|---:|`
  )
  await measure("`npm start`", ["npm", "start", "--silent"])
  if (existsSync(built)) {
    await measure("`node packages/server/dist/main.js`", [process.execPath, built])
    await measure("`trading-platform serve` (`dist/cli.js`)", [process.execPath, cli, "serve"])
  } else console.log("(the built server is missing: run `npm run build` first)")
  await measure("tsx over the sources (the tests' way)", [
    process.execPath,
    "--import",
    "tsx",
    "--conditions=@trading-platform/source",
    join(root, "packages/server/src/main.ts")
  ])
  const baseline = process.env["STARTUP_BASELINE"]
  if (baseline) await measure(`\`${baseline}\``, [process.execPath, baseline])
  console.log(
    `\nIdle CPU: ticks of 1/100 s used by the server's processes over ${idleCpuSeconds} s with no requests, ` +
      `and the share of one core (load average at the start: ${loadavg()[0]!.toFixed(2)}).\n`
  )
  console.log("| server | state | CPU ticks | of a core |\n|---|---|---:|---:|")
  await idleCpu("`npm start`", ["npm", "start", "--silent"])
  if (baseline) await idleCpu(`\`${baseline}\``, [process.execPath, baseline])
}
