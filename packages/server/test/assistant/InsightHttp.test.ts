import { describe, expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { insightSettled } from "../support/Insights.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const defaults = platformOptions().assistant
const assistant = { ...defaults, insightsPerHour: 3, insightJobs: { ...defaults.insightJobs, concurrency: 1 } }

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`insight jobs over ${storage.name}`, () => {
    layer(TestServer({ storage, config: { assistant } }), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/ai/insight answers 202 queued; the job completes with the analyst's reading of the market", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const queued = yield* call("POST", "/api/ai/insight", {
            token: alice.token,
            body: { symbol: "eth", timeframe: "4h" }
          })
          expect(queued.status).toBe(202)
          expect(queued.body).toEqual({ task_id: expect.stringMatching(/^\d+$/), status: "queued" })
          const done = yield* insightSettled(alice.token, queued.body.task_id)
          expect(done.status).toBe(200)
          expect(done.body.status).toBe("completed")
          const result = done.body.result
          expect(result).toMatchObject({ symbol: "ETH", timeframe: "4h" })
          expect(["bullish", "bearish", "neutral"]).toContain(result.sentiment)
          // No uncalibrated probability of a rise (issue 28): the sentiment is the reading.
          expect(result).not.toHaveProperty("probability_up")
          expect(result.summary).not.toContain("probability")
          expect(result.summary).toContain("Built-in analyst: ETH on 4h")
          expect(result.analyst).toBe("built-in analyst")
          expect(result.drivers.length).toBeGreaterThan(0)
          expect(result.risks.some((r: string) => r.includes("per 4h bar"))).toBe(true)
          expect(result.sources.map((s: any) => s.name)).toEqual(["market_data", "klines", "indicators", "ranking"])
          const prices = yield* call("POST", "/api/market/prices", { token: alice.token, body: { symbols: ["ETH"] } })
          const price = prices.body.prices.ETH.price
          for (const level of result.key_levels.support) expect(level).toBeLessThan(price)
          for (const level of result.key_levels.resistance) expect(level).toBeGreaterThan(price)
        }))

      it.effect("an empty body asks about BTC on 1h; the same facts give the same insight", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const first = yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} })
          const second = yield* call("POST", "/api/ai/insight", {
            token: alice.token,
            body: { symbol: null, timeframe: null, prompt: "and?" }
          })
          const a = (yield* insightSettled(alice.token, first.body.task_id)).body.result
          const b = (yield* insightSettled(alice.token, second.body.task_id)).body.result
          expect(a).toMatchObject({ symbol: "BTC", timeframe: "1h" })
          expect(b).toEqual(a)
        }))

      it.effect("another user's task answers 403, an unknown one 404, a malformed id or body 400, an unlisted symbol 422", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const queued = yield* call("POST", "/api/ai/insight", { token: alice.token, body: { symbol: "SOL" } })
          expectError(
            yield* call("GET", `/api/ai/insight/${queued.body.task_id}`, { token: bob.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/ai/insight/999999", { token: alice.token }), 404, "not_found")
          expectError(yield* call("GET", "/api/ai/insight/abc", { token: alice.token }), 400, "invalid_input")
          expectError(
            yield* call("POST", "/api/ai/insight", { token: alice.token, body: { timeframe: "2h" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", "/api/ai/insight", { token: alice.token, body: { symbol: "not a symbol" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", "/api/ai/insight", { token: alice.token, body: { symbol: "ZZZZ" } }),
            422,
            "symbol_not_listed"
          )
          expectError(yield* call("POST", "/api/ai/insight", { body: {} }), 401, "unauthorized")
          expect((yield* insightSettled(alice.token, queued.body.task_id)).body.status).toBe("completed")
        }))
    })
  })
}

// No workers here: moving the clock an hour would otherwise step through every idle poll.
describe("insight quota", () => {
  layer(
    TestServer({ config: { assistant: { ...assistant, insightJobs: { ...assistant.insightJobs, concurrency: 0 } } } }),
    {
      timeout: "120 seconds"
    }
  )((it) => {
    it.effect("past AI_INSIGHTS_PER_HOUR jobs in an hour the next answers 429; an hour later it is accepted", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        for (let i = 0; i < 3; i++) {
          expect((yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} })).status).toBe(202)
        }
        const limited = yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} })
        expectError(limited, 429, "rate_limited")
        expect(limited.headers.get("retry-after")).toBe(String(limited.body.retry_after))
        yield* TestClock.adjust("61 minutes")
        expect((yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} })).status).toBe(202)
      }))
  })
})
