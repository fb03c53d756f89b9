import { afterAll, describe, expect, layer } from "@effect/vitest"
import { fakeQuietHours, startFakeVenue2, testOptions, testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, Layer, TestClock } from "effect"
import { call, expectError, type Reply, signUp, TestServer } from "../support/TestServer.js"

const fake = await startFakeVenue2()
afterAll(() => fake.close())

const minute = 60_000
const day = fakeQuietHours.from - 5 * 3_600_000
const now = day + 5 * 86_400_000
const { venues } = testOptions({ kind: "pglite", dataDir: "memory://" })

/** venue2 is the fake HTTP venue (venue1 stays simulated); one candle sync worker. */
const SyncServer = TestServer({
  storage: testStorages[0]!,
  config: {
    venues: {
      ...venues,
      venue2: { mode: "http", baseUrl: fake.url, timeout: Duration.seconds(5), retries: 0 },
      candleSyncs: { concurrency: 1, pollInterval: Duration.seconds(1), lease: Duration.seconds(30), maxAttempts: 3 }
    }
  }
}).pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(now))))

const klineCalls = () => fake.calls.get("/fapi/v1/klines") ?? 0
const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

/** Polls the sync (on the real clock: workers and the venue's Retry-After run in real time) until it ends. */
const finished = (token: string, id: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 60_000
    for (;;) {
      const reply: Reply = yield* call("GET", `/api/market/candles/sync/${id}`, { token })
      expect(reply.status).toBe(200)
      if (["completed", "failed", "cancelled"].includes(reply.body.status)) return reply.body
      if (Date.now() > deadline) return yield* Effect.die(new Error(`sync ${id} still ${reply.body.status}`))
      yield* realPause
    }
  })

const sync = (token: string, body: Record<string, unknown>) =>
  call("POST", "/api/market/candles/sync", {
    token,
    body: { exchange: "venue2", symbol: "BTC", timeframe: "1m", ...body }
  })

describe("candle syncs from an HTTP venue", () => {
  layer(SyncServer, { timeout: "120 seconds" })((it) => {
    it.effect("a sync pages through the venue past its page cap and a 429, stores the range, and resumes where the store ends", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("syncer")
        // The venue answers at most 400 bars a page, and its next two requests 429 with Retry-After: 1.
        fake.klinesCap = 400
        fake.throttle = { times: 2, retryAfter: 1, path: "/fapi/v1/klines" }
        const before = klineCalls()
        const from = new Date(day).toISOString()
        const to = new Date(day + 2 * 86_400_000).toISOString()
        const queued = yield* sync(token, { from, to })
        expect(queued.status).toBe(202)
        expect(queued.body).toMatchObject({
          status: "queued",
          exchange: "venue2",
          symbol: "BTC",
          timeframe: "1m",
          from: new Date(day).toISOString()
        })
        const done = yield* finished(token, queued.body.id)
        // Two days of minutes less the venue's three quiet hours, which it has no bars for.
        const quiet = (fakeQuietHours.to - fakeQuietHours.from) / minute
        expect(done).toMatchObject({ status: "completed", progress: 1, result: { bars: 2 * 1440 - quiet, waits: 2 } })
        const firstCalls = klineCalls() - before
        // At least one request per 400 bars, and the two refused ones.
        expect(firstCalls).toBeGreaterThanOrEqual(Math.ceil((2 * 1440 - quiet) / 400) + 2)

        // The range reads from the store, page by page, with no venue call.
        const atStore = klineCalls()
        let next: string | null = from
        let bars = 0
        while (next !== null) {
          const page: Reply = yield* call(
            "GET",
            `/api/market/klines?exchange=venue2&symbol=BTC&timeframe=1m&limit=1000&start=${next}&end=${to}`,
            { token }
          )
          expect(page.status).toBe(200)
          bars += page.body.klines.length
          next = page.body.next_start
        }
        expect(bars).toBe(2 * 1440 - quiet)
        expect(klineCalls()).toBe(atStore)

        // A third day: only its bars are fetched.
        const wider = yield* sync(token, { from, to: new Date(day + 3 * 86_400_000).toISOString() })
        const again = klineCalls()
        const more = yield* finished(token, wider.body.id)
        expect(more).toMatchObject({ status: "completed", result: { bars: 3 * 1440 - quiet, waits: 0 } })
        // Its 1440 bars in the store's pages of 1000 and 440, each asked of the venue 400 at a time.
        expect(klineCalls() - again).toBe(Math.ceil(1000 / 400) + Math.ceil(440 / 400))
        fake.klinesCap = Infinity
      }))

    it.effect("failures: a simulated venue 400, a reversed range 400, an unknown symbol 422, another user's 403, no token 401", () =>
      Effect.gen(function*() {
        const owner = yield* signUp("sync-owner")
        const other = yield* signUp("sync-other")
        const range = { from: new Date(day).toISOString(), to: new Date(day + 3_600_000).toISOString() }
        const simulated = yield* sync(owner.token, { ...range, exchange: "venue1" })
        expectError(simulated, 400, "invalid_input")
        expect(simulated.body.issues[0].path).toBe("exchange")
        const reversed = yield* sync(owner.token, { from: range.to, to: range.from })
        expectError(reversed, 400, "invalid_input")
        expect(reversed.body.issues[0].path).toBe("to")
        expectError(
          yield* sync(owner.token, { ...range, to: new Date(day + 20 * 365 * 86_400_000).toISOString() }),
          400,
          "invalid_input"
        )
        expectError(yield* sync(owner.token, { ...range, symbol: "DOGE" }), 422, "symbol_not_listed")
        expectError(yield* sync(owner.token, { ...range, timeframe: "2h" }), 400, "invalid_input")
        expectError(yield* sync("", range), 401, "unauthorized")
        const mine = yield* sync(owner.token, range)
        expect(mine.status).toBe(202)
        expectError(
          yield* call("GET", `/api/market/candles/sync/${mine.body.id}`, { token: other.token }),
          403,
          "forbidden"
        )
        expectError(
          yield* call("POST", `/api/market/candles/sync/${mine.body.id}/cancel`, { token: other.token }),
          403,
          "forbidden"
        )
        expectError(yield* call("GET", "/api/market/candles/sync/999999", { token: owner.token }), 404, "not_found")
        // A venue that says how long to wait: the API's 503 says it too.
        fake.throttle = { times: 1, retryAfter: 7, path: "/fapi/v1/klines" }
        const busy = yield* call(
          "GET",
          `/api/market/klines?exchange=venue2&symbol=ETH&timeframe=4h&start=${range.from}&limit=5`,
          { token: owner.token }
        )
        expectError(busy, 503, "unavailable")
        expect(busy.body.retry_after).toBe(7)
        expect(busy.headers.get("retry-after")).toBe("7")
        yield* finished(owner.token, mine.body.id)
        expectError(
          yield* call("POST", `/api/market/candles/sync/${mine.body.id}/cancel`, { token: owner.token }),
          409,
          "conflict"
        )
      }))
  })
})
