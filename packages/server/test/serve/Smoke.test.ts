import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { builtServer, referenceServer } from "../support/ServerProcess.js"
import { openSseAt, openWsAt } from "../support/StreamClients.js"

// What only the shipped server can break (the tests run the sources; a lazy import of a CommonJS
// package worked there and failed in the bundle): each feature's main path over HTTP, against the
// two ways a user starts it, each started once and shared by the tests of its way.

// A news feed on loopback, which the servers below are allowed to fetch: reading it loads the
// feed parser, which the shipped server loads on first use.
const feed = createServer((_, res) =>
  res.writeHead(200, { "content-type": "application/rss+xml" }).end(
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Smoke news</title>
      <item><title>BTC smoke test</title><link>http://news.test/smoke</link></item></channel></rss>`
  )
).listen(0, "127.0.0.1").unref()
await new Promise((resolve) => feed.once("listening", resolve))
const feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/rss`

// Polling below asks more than the default read limit allows a minute.
const flags = [
  "--fetch-allow-hosts",
  "127.0.0.1",
  "--rate-limit-auth-per-min",
  "1000",
  "--rate-limit-read-per-min",
  "100000",
  "--rate-limit-write-per-min",
  "100000",
  // The arena measures its dashboard every second, so the leaderboard fills within the test.
  "--arena-pnl-refresh-ms",
  "1000"
]

const ways = [
  { name: "`npm start` (scripts/start.mjs and its bundle)", start: referenceServer(flags, "bundle") },
  { name: "the built server (`node packages/server/dist/main.js`)", start: builtServer(flags) }
]

/** The running server and a user signed up on it. */
class Shipped extends Context.Tag("Shipped")<Shipped, { readonly base: string; readonly token: string }>() {}

interface Reply {
  readonly status: number
  readonly body: any
  readonly text: string
  readonly type: string
}

const request = (
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; csv?: string } = {}
) =>
  Effect.promise(async (): Promise<Reply> => {
    const reply = await fetch(base + path, {
      method,
      headers: {
        ...(options.csv !== undefined
          ? { "content-type": "text/csv" }
          : options.body === undefined
          ? {}
          : { "content-type": "application/json" }),
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` })
      },
      ...(options.csv !== undefined
        ? { body: options.csv }
        : options.body === undefined
        ? {}
        : { body: JSON.stringify(options.body) })
    })
    const text = await reply.text()
    const type = reply.headers.get("content-type") ?? ""
    return { status: reply.status, text, type, body: type.includes("json") ? JSON.parse(text) : undefined }
  })

/** A request of the signed-up user. */
const api = (method: string, path: string, body?: unknown) =>
  Effect.flatMap(Shipped, ({ base, token }) => request(base, method, `/api${path}`, { token, body }))

const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 250)))

/** Reads `path` until `done` holds for its body (background work runs in real time), or fails at the deadline. */
const poll = (path: string, done: (body: any) => boolean, deadlineMs = 90_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const reply = yield* api("GET", path)
      expect(reply.status, reply.text).toBe(200)
      if (done(reply.body)) return reply.body
      if (Date.now() > deadline) return yield* Effect.die(new Error(`${path} at the deadline: ${reply.text}`))
      yield* pause
    }
  })

const settled = (status: string) => !["queued", "running"].includes(status)

const javascript = `export const parameters = { portion: { kind: "float", min: 0.1, max: 1, default: 0.5 } }
export function decide(data) {
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: data.params.portion }
}
`
const typescript = `export function decide(data: { symbols: Record<string, { position: unknown }> }): object {
  return Object.keys(data.symbols).map((symbol: string) => ({ symbol, operation: data.symbols[symbol]!.position ? "close" : "buy", target_portion_of_balance: 0.4 }))
}
`

for (const way of ways) {
  const server = Layer.scoped(
    Shipped,
    Effect.gen(function*() {
      const base = yield* way.start
      const user = { email: "smoke@example.com", username: "smoke", password: "correct horse battery" }
      expect((yield* request(base, "POST", "/api/users/register", { body: user })).status).toBe(201)
      const login = yield* request(base, "POST", "/api/users/login", {
        body: { email: user.email, password: user.password }
      })
      expect(login.status).toBe(200)
      return { base, token: login.body.session_token as string }
    })
  )

  describe(way.name, () => {
    layer(server, { excludeTestServices: true, timeout: "240 seconds" })((it) => {
      it.effect("health, /openapi.json and /docs answer", () =>
        Effect.gen(function*() {
          const { base } = yield* Shipped
          const health = yield* request(base, "GET", "/api/health")
          expect(health.status).toBe(200)
          expect(health.body).toMatchObject({ status: "ok", storage: expect.any(String) })
          const openapi = yield* request(base, "GET", "/openapi.json")
          expect(openapi.status).toBe(200)
          expect(openapi.body.openapi).toMatch(/^3\.1/)
          expect(Object.keys(openapi.body.paths)).toContain("/api/users/me")
          const docs = yield* request(base, "GET", "/docs")
          expect([docs.status, docs.type]).toEqual([200, expect.stringContaining("text/html")])
        }))

      it.effect("the user reads itself; accounts are created, listed and updated; a venue wallet is stored and tested", () =>
        Effect.gen(function*() {
          expect((yield* api("GET", "/users/me")).body).toMatchObject({ email: "smoke@example.com", username: "smoke" })
          const created = yield* api("POST", "/account", { name: "Smoke", account_type: "MANUAL" })
          expect(created.status).toBe(201)
          const list = yield* api("GET", "/account/list")
          expect(list.body.map((a: any) => a.id)).toContain(created.body.id)
          const updated = yield* api("PUT", `/account/${created.body.id}`, {
            name: "Smoke renamed",
            default_leverage: 2
          })
          expect(updated.status).toBe(200)
          expect(updated.body).toMatchObject({ name: "Smoke renamed", default_leverage: 2 })
          const wallet = yield* api("PUT", `/venue1/accounts/${created.body.id}/wallet`, {
            environment: "testnet",
            wallet_address: `0x${"ab".repeat(20)}`,
            private_key: `0x${"5e".repeat(32)}`
          })
          expect(wallet.status, wallet.text).toBe(200)
          const tested = yield* api("POST", `/venue1/accounts/${created.body.id}/wallet/test`)
          expect(tested.status).toBe(200)
          expect(tested.body.success).toBe(true)
        }))

      it.effect("a signal and a pool watching it are created and listed", () =>
        Effect.gen(function*() {
          const signal = yield* api("POST", "/signals", {
            signal_name: "any open interest",
            trigger_condition: { metric: "oi", operator: "gt", threshold: 0, time_window: "1m" }
          })
          expect(signal.status, signal.text).toBe(201)
          const pool = yield* api("POST", "/signals/pools", {
            pool_name: "smoke pool",
            signal_ids: [signal.body.id],
            symbols: ["BTC"]
          })
          expect(pool.status, pool.text).toBe(201)
          const all = (yield* api("GET", "/signals")).body
          expect(all.signals.map((s: any) => s.id)).toContain(signal.body.id)
          expect(all.pools.map((p: any) => p.id)).toContain(pool.body.id)
        }))

      it.effect("a JavaScript program backtests over one symbol; a TypeScript one over two and a longer timeframe", () =>
        Effect.gen(function*() {
          const runs = [
            {
              language: "javascript",
              code: javascript,
              backtest: { symbol: "BTC", timeframe: "1h", params: { portion: 0.25 } }
            },
            {
              language: "typescript",
              code: typescript,
              backtest: { symbols: ["BTC", "ETH"], timeframes: ["4h"], timeframe: "1h" }
            }
          ]
          const saved: Array<number> = []
          for (const run of runs) {
            const program = yield* api("POST", "/programs", {
              name: run.language,
              language: run.language,
              code: run.code
            })
            expect(program.status, program.text).toBe(201)
            saved.push(program.body.id)
            expect(program.body.parameters?.map((p: any) => p.name) ?? null).toEqual(
              run.language === "javascript" ? ["portion"] : null
            )
            const queued = yield* api("POST", `/programs/${program.body.id}/backtest`, {
              ...run.backtest,
              start: "2025-01-01T00:00:00Z",
              end: "2025-01-03T00:00:00Z"
            })
            expect(queued.status, queued.text).toBe(202)
            expect(queued.body.params).toEqual(run.language === "javascript" ? { portion: 0.25 } : {})
            const done = yield* poll(`/programs/backtest/${queued.body.id}`, (b) => settled(b.status))
            expect([done.status, done.error]).toEqual(["completed", null])
            expect(done.total_trades).toBeGreaterThan(0)
            if (run.language === "typescript") {
              expect(done.per_symbol.map((m: any) => [m.symbol, m.total_trades > 0])).toEqual([["BTC", true], [
                "ETH",
                true
              ]])
            }
            const history = yield* api("GET", `/programs/backtest/history?program_id=${program.body.id}`)
            expect(history.body.backtests.map((b: any) => [b.id, b.status])).toEqual([[queued.body.id, "completed"]])
            const page = yield* api("GET", `/programs/backtest/${queued.body.id}/trades?limit=2&offset=1`)
            expect(page.body).toEqual({ trades: done.trades.slice(1, 3), total: done.trades.length })
          }
          // Newest first, as summaries: without their code.
          const listed = (yield* api("GET", "/programs")).body.programs.filter((p: any) => saved.includes(p.id))
          expect(listed.map((p: any) => [p.name, "code" in p])).toEqual(
            [...runs].reverse().map((run) => [run.language, false])
          )
        }))

      it.effect("an optimisation searches a program's parameters in trial threads, streams its progress and ranks its trials", () =>
        Effect.gen(function*() {
          const program = (yield* api("POST", "/programs", { name: "searched", code: javascript })).body
          const base = `/programs/${program.id}/optimizations`
          const queued = yield* api("POST", base, {
            symbol: "BTC",
            timeframe: "1h",
            start: "2025-01-01T00:00:00Z",
            end: "2025-01-03T00:00:00Z",
            search: "grid",
            space: { portion: { min: 0.2, max: 0.8, steps: 3 } },
            objective: "total_return"
          })
          expect(queued.status, queued.text).toBe(202)
          const stream = yield* api("GET", `${base}/${queued.body.id}/stream`)
          expect(stream.type).toContain("text/event-stream")
          expect(stream.text).toContain(`"status":"completed","trials_done":4`)
          const done = yield* poll(`${base}/${queued.body.id}`, (o) => settled(o.status))
          expect([done.status, done.error, done.trials_done]).toEqual(["completed", null, 4])
          expect([0.2, 0.5, 0.8]).toContain(done.result.best.params.portion)
          const trials = yield* api("GET", `${base}/${queued.body.id}/trials?role=search&sort=objective&order=desc`)
          expect(trials.body.trials.map((t: any) => t.objective)).toEqual(
            [...trials.body.trials.map((t: any) => t.objective)].sort((a: number, b: number) => b - a)
          )
          expect(trials.body.trials[0].params).toEqual(done.result.best.params)
          const listed = (yield* api("GET", base)).body.optimizations
          expect(listed.map((o: any) => [o.id, o.status, o.trials_done])).toEqual([[queued.body.id, "completed", 4]])
        }))

      it.effect("a binding run by hand opens a paper position: its run, order and position", () =>
        Effect.gen(function*() {
          const account = (yield* api("POST", "/account", { name: "Smoke bot" })).body
          const program = (yield* api("POST", "/programs", { name: "live", code: javascript })).body
          const binding = yield* api("POST", `/programs/${program.id}/bindings`, {
            account_id: account.id,
            symbols: ["BTC"],
            timeframe: "1h",
            interval_minutes: 1440
          })
          expect(binding.status, binding.text).toBe(201)
          const run = yield* api("POST", `/programs/${program.id}/bindings/${binding.body.id}/run`)
          expect(run.status, run.text).toBe(202)
          const runs = yield* poll(
            `/programs/${program.id}/bindings/${binding.body.id}/runs`,
            (b) => b.runs.length > 0 && b.runs.every((r: any) => settled(r.status))
          )
          expect(runs.runs.map((r: any) => [r.status, r.error])).toEqual([["completed", null]])
          const orders = (yield* api("GET", `/account/${account.id}/orders`)).body.orders
          expect(orders.map((o: any) => [o.symbol, o.side, o.status])).toEqual([["BTC", "buy", "filled"]])
          const positions = (yield* api("GET", `/account/${account.id}/positions`)).body.positions
          expect(positions.map((p: any) => [p.symbol, p.side])).toEqual([["BTC", "long"]])
          // Closed by hand, through the same firewall; the account's risk and its reconciliations read.
          const close = yield* api("POST", `/account/${account.id}/orders`, {
            symbol: "BTC",
            side: "sell",
            quantity: positions[0].size,
            reduce_only: true
          })
          expect([close.status, close.body.status], close.text).toEqual([201, "filled"])
          expect((yield* api("GET", `/account/${account.id}/positions`)).body.positions).toEqual([])
          expect((yield* api("GET", `/account/${account.id}/risk`)).body.mode).toBe("active")
          expect((yield* api("GET", `/account/${account.id}/reconciliations`)).body).toEqual({ reconciliations: [] })
        }))

      it.effect("an AI account's built-in model decides a round by hand; the round is in its decision log", () =>
        Effect.gen(function*() {
          const account = (yield* api("POST", "/account", { name: "Smoke AI" })).body
          const set = yield* api("PUT", `/account/${account.id}/ai-trader`, { enabled: false, symbols: ["BTC"] })
          expect(set.status, set.text).toBe(200)
          const queued = yield* api("POST", `/account/${account.id}/ai-trader/decide`)
          expect(queued.status, queued.text).toBe(202)
          const log = yield* poll(
            `/account/${account.id}/decisions`,
            (b) => b.decisions.length > 0 && b.decisions.every((r: any) => settled(r.status))
          )
          expect(log.decisions[0]).toMatchObject({ trigger: "manual", status: "completed", error: null })
          expect(log.decisions[0].prompt).toContain("BTC")
          expect((yield* api("GET", "/ai/prompt-variables")).status).toBe(200)
        }))

      it.effect("market prices and candles, the ranking, a news feed read, analytics and the arena answer", () =>
        Effect.gen(function*() {
          const prices = yield* api("POST", "/market/prices", { symbols: ["BTC", "ETH"] })
          expect(prices.status).toBe(200)
          expect(prices.body.prices.BTC.price).toBeGreaterThan(0)
          const candles = yield* api("GET", "/market/klines?symbol=BTC&timeframe=1h&limit=24")
          expect(candles.status).toBe(200)
          expect(candles.body.klines).toHaveLength(24)
          // Two days of hourly bars imported as a dataset: listed with its extent, read back as candles.
          const from = Date.parse("2025-01-01T00:00:00Z")
          const csv = Array.from(
            { length: 48 },
            (_, i) => `${from + i * 3_600_000},${100 + i},${101 + i},${99 + i},${100 + i},1`
          )
          const imported = yield* Effect.flatMap(
            Shipped,
            ({ base, token }) =>
              request(base, "POST", "/api/market/candles/import?name=smoke&venue=venue1&symbol=BTC&timeframe=1h", {
                token,
                csv: `time,open,high,low,close,volume\n${csv.join("\n")}\n`
              })
          )
          expect(imported.status, imported.text).toBe(200)
          const dataset = { bars: 48, first: "2025-01-01T00:00:00.000Z", last: "2025-01-02T23:00:00.000Z" }
          expect(imported.body.dataset).toMatchObject(dataset)
          expect((yield* api("GET", "/market/datasets")).body.datasets).toMatchObject([{ name: "smoke", ...dataset }])
          const bars = yield* api("GET", "/market/klines?symbol=BTC&timeframe=1h&exchange=dataset:smoke&limit=100")
          expect(bars.body.klines.map((k: any) => k.close)).toEqual(Array.from({ length: 48 }, (_, i) => 100 + i))
          expect((yield* api("GET", "/ranking/factors")).body.factors.length).toBeGreaterThan(0)
          const table = yield* api("GET", "/ranking/table?limit=3")
          expect(table.status).toBe(200)
          expect(table.body.rows.map((r: any) => r.rank)).toEqual([1, 2, 3])
          expect((yield* api("GET", "/news/sources")).body.sources.length).toBeGreaterThan(0)
          expect((yield* api("POST", "/news/sources", { name: "smoke", url: feedUrl })).status).toBe(201)
          const refreshed = yield* api("POST", "/news/refresh")
          expect(refreshed.body.sources.find((s: any) => s.url === feedUrl)).toMatchObject({
            new_items: 1,
            error: null
          })
          expect((yield* api("GET", "/news")).body.items.map((i: any) => [i.link, i.symbols])).toEqual([
            ["http://news.test/smoke", ["BTC"]]
          ])
          const summary = yield* api("GET", "/analytics/program-summary?dimension=program")
          expect(summary.status).toBe(200)
          expect(summary.body).toMatchObject({ dimension: "program", items: expect.any(Array) })
          const arena = yield* api("GET", "/arena/check-pnl-status")
          expect(arena.status).toBe(200)
          expect(arena.body).toHaveProperty("status")
          // Every account created above is on the dashboard: the leaderboard ranks them once measured.
          const board = yield* poll("/arena/leaderboard?window=24h", (b) => b.total >= 2)
          expect(board.entries.map((e: any) => e.rank)).toEqual(board.entries.map((_: any, i: number) => i + 1))
          expect(board.entries[0]).toMatchObject({ owner: "smoke", equity: expect.any(Number) })
          expect(board.entries[0].equity_curve.length).toBeGreaterThan(0)
        }))

      it.effect("the built-in analyst converses, chats over Server-Sent Events and writes an insight", () =>
        Effect.gen(function*() {
          const { base, token } = yield* Shipped
          const conversation = yield* api("POST", "/ai/conversations", { message: "How is BTC doing?", context: {} })
          expect(conversation.status, conversation.text).toBe(201)
          expect(conversation.body.message_count).toBe(2)
          const chat = yield* Effect.promise(() =>
            fetch(`${base}/api/ai/chat`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify({ message: "And ETH?", conversation_id: conversation.body.id })
            }).then(async (r) => ({ type: r.headers.get("content-type") ?? "", text: await r.text() }))
          )
          expect(chat.type).toContain("text/event-stream")
          const events = [...chat.text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
          expect(events).toContain("delta")
          expect(events.at(-1)).toBe("done")
          const messages = yield* api("GET", `/ai/conversations/${conversation.body.id}/messages`)
          expect(messages.status).toBe(200)
          expect(messages.body.messages.length).toBeGreaterThanOrEqual(4)
          const insight = yield* api("POST", "/ai/insight", { symbol: "BTC", timeframe: "1h" })
          expect(insight.status, insight.text).toBe(202)
          const done = yield* poll(`/ai/insight/${insight.body.task_id}`, (b) => settled(b.status))
          expect([done.status, done.error ?? null]).toEqual(["completed", null])
        }))

      it.effect("the market-intelligence stream opens with a snapshot; a WebSocket answers a ping and a subscription", () =>
        Effect.gen(function*() {
          const { base, token } = yield* Shipped
          const sse = yield* openSseAt(base, "?symbols=BTC", { token })
          expect(sse.status).toBe(200)
          const first = yield* Effect.promise(() => sse.next(undefined, 30_000))
          expect(first.event).toBe("snapshot")
          sse.close()
          yield* Effect.promise(() => sse.ended)
          // The token's one stream is let go once the stream has closed.
          let ws = yield* openWsAt(base, `?session_token=${token}`)
          for (let deadline = Date.now() + 10_000; (yield* Effect.promise(() => ws.refused)) === 429;) {
            if (Date.now() > deadline) break
            yield* pause
            ws = yield* openWsAt(base, `?session_token=${token}`)
          }
          expect(yield* Effect.promise(() => ws.refused)).toBeUndefined()
          ws.send({ type: "ping" })
          expect(yield* Effect.promise(() => ws.next((m) => m.type === "pong"))).toMatchObject({ type: "pong" })
          ws.send({ type: "subscribe", channel: "prices:BTC" })
          expect(yield* Effect.promise(() => ws.next((m) => m.type === "subscribed"))).toEqual({
            type: "subscribed",
            channel: "prices:BTC"
          })
          ws.socket.close(1000)
          expect((yield* Effect.promise(() => ws.closed)).code).toBe(1000)
        }))
    })
  })
}
