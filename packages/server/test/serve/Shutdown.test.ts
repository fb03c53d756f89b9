import { describe, expect, it } from "@effect/vitest"
import { testDatabaseUrl, testStorages } from "@trading-platform/core/testing"
import { Effect, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import WebSocket from "ws"
import { tradingProgram } from "../support/Backtests.js"
import { type Running, start, waitFor } from "../support/ServerProcess.js"
import { uniqueUser } from "../support/TestServer.js"

const listening = async (running: Running) => (await waitFor(running, /Listening on (http:\/\/[\d.:]+)/))[1]!

const send = async (base: string, method: string, path: string, body?: unknown, token?: string) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (token) headers["authorization"] = `Bearer ${token}`
  const reply = await fetch(base + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await reply.text()
  return { status: reply.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** A login whose body is sent in two parts, `pauseMs` apart; answers when the server does. */
const slowLogin = (base: string, credentials: unknown, pauseMs: number, midway: () => void) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const body = JSON.stringify(credentials)
    const req = request(`${base}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on("error", reject)
    req.write(body.slice(0, 10))
    setTimeout(() => {
      midway()
      setTimeout(() => req.end(body.slice(10)), pauseMs)
    }, 200)
  })

/** An open market-intelligence stream; `ended` tells whether the server ended it cleanly or broke it off. */
const openStream = async (base: string, token: string) => {
  const response = await fetch(`${base}/api/market-intelligence/stream?symbols=BTC`, {
    headers: { authorization: `Bearer ${token}` }
  })
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
  const ended = (async () => {
    try {
      for await (const _ of response.body as unknown as AsyncIterable<Uint8Array>) {
        // the events do not matter here
      }
      return "ended"
    } catch {
      return "broken off"
    }
  })()
  return { ended }
}

/** An open WebSocket; `closed` answers its close code. */
const openSocket = async (base: string, token: string) => {
  const socket = new WebSocket(`${base.replace("http", "ws")}/api/ws?session_token=${token}`)
  const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    socket.on("open", () => resolve())
    socket.on("error", reject)
  })
  return { closed }
}

const until = async <A>(what: string, probe: () => Promise<A | undefined>, deadlineMs = 60_000): Promise<A> => {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.skipIf(!testDatabaseUrl)("graceful shutdown of a replica (PostgreSQL)", () => {
  it.scopedLive(
    "SIGTERM finishes the request in flight, ends open streams, hands the running job back at once (queued again, without using up an attempt), logs it, and exits 0; another replica takes the job over",
    () =>
      Effect.gen(function*() {
        const storage = yield* testStorages[1]!.storage
        if (storage.kind !== "postgres") throw new Error("expected PostgreSQL")
        const url = Redacted.value(storage.url)
        const env = (leaseMs: number) => ({
          DATABASE_URL: url,
          SECRET_KEY: "shutdown-test-secret-key-0123456789abcdef",
          BACKTEST_CONCURRENCY: "1",
          BACKTEST_POLL_INTERVAL_MS: "200",
          // Far longer than the test: only a released lease lets the other replica take the job.
          BACKTEST_LEASE_MS: String(leaseMs)
        })
        const db = new pg.Client({ connectionString: url })
        yield* Effect.acquireRelease(Effect.promise(() => db.connect()), () => Effect.promise(() => db.end()))
        const row = (id: number) =>
          db.query("SELECT status, progress, attempts, claimed_by, lease_until, error FROM backtests WHERE id = $1", [
            id
          ]).then((r) => r.rows[0])

        yield* Effect.promise(async () => {
          const first = start(["--port", "0"], env(600_000))
          try {
            const base = await listening(first)
            const user = uniqueUser("shutdown")
            expect((await send(base, "POST", "/api/users/register", user)).status).toBe(201)
            const login = async () =>
              (await send(base, "POST", "/api/users/login", { email: user.email, password: user.password })).body
                .session_token as string
            const token = await login()
            // Opened before the job starts, which keeps the simulated venue busy; one stream per token.
            const sse = await openStream(base, token)
            const ws = await openSocket(base, await login())
            const program = await send(base, "POST", "/api/programs", { name: "p", code: tradingProgram }, token)
            expect(program.status).toBe(201)
            // Daily bars over thirteen centuries: runs far longer than the test.
            const job = await send(base, "POST", `/api/programs/${program.body.id}/backtest`, {
              symbol: "BTC",
              timeframe: "1d",
              start: "0700-01-01T00:00:00Z",
              end: "2025-01-01T00:00:00Z"
            }, token)
            expect(job.status).toBe(202)
            const id: number = job.body.id
            await until("the job to run on the first replica", async () => {
              const r = await row(id)
              return r.status === "running" && r.claimed_by.includes(`:${first.child.pid}:`) && r.progress > 0
                ? r
                : undefined
            })
            const inFlight = await slowLogin(base, { email: user.email, password: user.password }, 300, () =>
              first.child.kill("SIGTERM"))
            expect(inFlight.status).toBe(200)
            expect(await first.exited).toBe(0)
            expect(await sse.ended).toBe("ended")
            expect(await ws.closed).toBe(1001)
            // Waiting for a worker again, as a new job would: not running, and at no progress.
            // Stopped, not failed: the run does not count against the job's attempts.
            expect(await row(id)).toEqual({
              status: "queued",
              progress: 0,
              attempts: 0,
              claimed_by: null,
              lease_until: null,
              error: "The worker stopped"
            })
            const log = first.output()
            expect(log).toMatch(/Shutting down on SIGTERM: finishing the requests in flight/)
            expect(log).toContain(`Handed back backtests job ${id}: the worker stopped`)
            expect(log).toMatch(/Shut down in \d+(ms|s)/)

            // The second is `npm start`'s bundle: PostgreSQL's client and its listener load lazily,
            // which only a bundle can break (the job would still be found by the poll, so its log is read).
            const second = start(["--port", "0"], env(600_000), {}, "bundle")
            try {
              const base2 = await listening(second)
              await until("the second replica to take the job over", async () => {
                const r = await row(id)
                return r.claimed_by?.includes(`:${second.child.pid}:`) && r.status === "running" ? r : undefined
              }, 30_000)
              expect((await row(id)).attempts).toBe(1)
              expect(second.output()).not.toMatch(/wake-ups (are not listened to|stopped)/)
              const token2 =
                (await send(base2, "POST", "/api/users/login", { email: user.email, password: user.password })).body
                  .session_token
              expect((await send(base2, "POST", `/api/programs/backtest/${id}/cancel`, undefined, token2)).status).toBe(
                200
              )
            } finally {
              second.child.kill("SIGTERM")
              expect(await second.exited).toBe(0)
            }
          } finally {
            first.child.kill("SIGKILL")
          }
        })
      }),
    180_000
  )
})

describe("a backtest handed back by a shutdown (embedded database)", () => {
  it("answers queued at no progress, with why it stopped, until a worker claims it; cancelled, it keeps no error", {
    timeout: 180_000
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tp-handback-"))
    const env = (workers: number) => ({ DATA_DIR: dataDir, BACKTEST_CONCURRENCY: String(workers) })
    try {
      const first = start(["--port", "0"], env(1))
      let user: ReturnType<typeof uniqueUser>, id: number
      try {
        const base = await listening(first)
        user = uniqueUser("handback")
        expect((await send(base, "POST", "/api/users/register", user)).status).toBe(201)
        const token = (await send(base, "POST", "/api/users/login", { email: user.email, password: user.password }))
          .body
          .session_token as string
        const program = await send(base, "POST", "/api/programs", { name: "p", code: tradingProgram }, token)
        // Daily bars over thirteen centuries: runs far longer than the test.
        const job = await send(base, "POST", `/api/programs/${program.body.id}/backtest`, {
          symbol: "BTC",
          timeframe: "1d",
          start: "0700-01-01T00:00:00Z",
          end: "2025-01-01T00:00:00Z"
        }, token)
        expect(job.status).toBe(202)
        id = job.body.id
        await until("the job to make progress", async () => {
          const { body } = await send(base, "GET", `/api/programs/backtest/${id}`, undefined, token)
          return body.status === "running" && body.progress > 0 ? body : undefined
        })
        first.child.kill("SIGTERM")
        expect(await first.exited).toBe(0)
      } finally {
        first.child.kill("SIGKILL")
      }

      // Restarted without workers, the job waits: it reads as queued, not as running at its old progress.
      const second = start(["--port", "0"], env(0))
      try {
        const base = await listening(second)
        const token = (await send(base, "POST", "/api/users/login", { email: user.email, password: user.password }))
          .body
          .session_token as string
        const waiting = (await send(base, "GET", `/api/programs/backtest/${id}`, undefined, token)).body
        expect(waiting).toMatchObject({ status: "queued", progress: 0, error: "The worker stopped" })
        const cancelled = await send(base, "POST", `/api/programs/backtest/${id}/cancel`, undefined, token)
        expect(cancelled.status).toBe(200)
        expect((await send(base, "GET", `/api/programs/backtest/${id}`, undefined, token)).body).toMatchObject({
          status: "cancelled",
          error: null
        })
        second.child.kill("SIGTERM")
        expect(await second.exited).toBe(0)
      } finally {
        second.child.kill("SIGKILL")
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
