import { describe, expect, layer } from "@effect/vitest"
import { defaultAiTraderOptions } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, Layer, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { waitForRounds } from "../support/AiTraders.js"
import { AutomationServer } from "../support/Automation.js"
import { completion, fake, FakeProvider, reset, silent } from "../support/FakeModel.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const prices = { "test-model": { prompt: 1000, completion: 2000 } }

// The fake model server on loopback (allowed), and one AI backtest worker.
const Server = (storage: (typeof testStorages)[number]) =>
  Layer.unwrapScoped(Effect.map(FakeProvider, () =>
    AutomationServer(storage, {}, {
      fetch: { allowHosts: ["127.0.0.1"] },
      aiTraders: { ...defaultAiTraderOptions, timeout: Duration.minutes(2), prices },
      backtests: { concurrency: 1, pollInterval: Duration.seconds(1), lease: Duration.seconds(30), maxAttempts: 3 }
    })))

const answer = (...decisions: ReadonlyArray<Record<string, unknown>>) => completion(JSON.stringify({ decisions }))
const buy = answer({ operation: "buy", symbol: "BTC", target_portion_of_balance: 0.5, leverage: 2, reason: "up" })
const keep = answer({ operation: "hold", symbol: "BTC", reason: "wait" })
const close = answer({ operation: "close", symbol: "BTC", reason: "done" })

/** A day of hourly bars with a decision every four hours: six slots. */
const day = { start: "2025-05-01T00:00:00Z", end: "2025-05-02T00:00:00Z", timeframe: "1h", interval_minutes: 240 }
const sixAnswers = [buy, keep, close, buy, keep, close]

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Queues an AI backtest and polls it (on the real clock) until it has finished. */
const backtest = (token: string, accountId: number, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const queued = yield* call("POST", `/api/account/${accountId}/backtest`, { token, body })
    expect(queued.status).toBe(202)
    expect(queued.body).toMatchObject({ account_id: accountId, status: "queued" })
    const deadline = Date.now() + 60_000
    for (;;) {
      const reply = yield* call("GET", `/api/account/${accountId}/backtests/${queued.body.id}`, { token })
      expect(reply.status).toBe(200)
      if (["completed", "failed", "cancelled"].includes(reply.body.status)) return reply.body
      if (Date.now() > deadline) return yield* Effect.die(new Error(`backtest at the deadline: ${reply.body.status}`))
      yield* realPause
    }
  })

/** What two runs over the same answers must share. */
const results = (b: any) => ({
  metrics: b.metrics,
  trades: b.trades,
  fills: b.fills,
  equity_curve: b.equity_curve,
  final_balance: b.final_balance,
  decisions: b.slots.map((s: any) => [s.time, s.key, s.decisions])
})

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`AI backtests over ${storage.name}`, () => {
    layer(Server(storage), { timeout: "180 seconds" })((it) => {
      it.effect("a model backtest asks for unseen prompts only: again it makes no call and gives the same result, and a replay asks no model", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { model: "test-model", base_url: fake.url, api_key: "sk-x" })
          yield* reset(...sixAnswers)
          const first = yield* backtest(token, account.id, day)
          expect(first).toMatchObject({
            status: "completed",
            mode: "model",
            model: "test-model",
            symbols: ["BTC"],
            stop_reason: null,
            model_calls: 6,
            cached_calls: 0,
            prompt_tokens: 6 * 42,
            completion_tokens: 6 * 7
          })
          expect(first.cost).toBeCloseTo(6 * (42 * 1000 + 7 * 2000) / 1_000_000, 10)
          expect(fake.requests).toHaveLength(6)
          expect(first.slots.map((s: any) => [new Date(s.time).toISOString(), s.answer])).toEqual(
            [4, 8, 12, 16, 20, 24].map((h) => [new Date(Date.parse(day.start) + h * 3_600_000).toISOString(), "model"])
          )
          // Two round trips, filled at the next bar's open by the program backtests' engine; the last
          // close, decided at the last bar, has no open to fill at: the run's end closes it.
          expect(first.trades.map((t: any) => [t.side, t.exit_reason, t.entry_time])).toEqual([
            ["long", "signal", Date.parse("2025-05-01T04:00:00Z")],
            ["long", "end_of_data", Date.parse("2025-05-01T16:00:00Z")]
          ])
          expect(first.metrics.total_trades).toBe(2)
          expect(first.equity_curve.length).toBe(24)
          // The prompt holds the history up to the slot only: the last candle shown closed at the slot.
          const prompt = JSON.parse(fake.requests[0]!.body.messages[1].content.replace(/^Context: /, ""))
          expect(prompt.time).toBe("2025-05-01T04:00:00.000Z")
          expect(prompt.symbols[0].candles.at(-1)[0]).toBe(Date.parse("2025-05-01T03:00:00Z"))
          expect(prompt.news).toEqual([])
          expect(prompt.account).toMatchObject({ id: account.id, cash: 10_000, margin_in_use: 0 })
          // The second prompt shows the position the first answer opened.
          const second = JSON.parse(fake.requests[1]!.body.messages[1].content.replace(/^Context: /, ""))
          expect(second.positions).toEqual([expect.objectContaining({ symbol: "BTC", side: "long", leverage: 2 })])

          // The same run again: every prompt is cached, so no model call, and the very same result.
          yield* reset()
          const again = yield* backtest(token, account.id, day)
          expect(again).toMatchObject({
            status: "completed",
            model_calls: 0,
            cached_calls: 6,
            prompt_tokens: 0,
            cost: 0
          })
          expect(again.slots.every((s: any) => s.answer === "cache")).toBe(true)
          expect(results(again)).toEqual(results(first))
          expect(fake.requests).toHaveLength(0)

          // A replay asks no model at all (any call would reach the fake, which has no answer left).
          const replay = yield* backtest(token, account.id, { ...day, mode: "replay" })
          expect(replay).toMatchObject({ status: "completed", mode: "replay", model_calls: 0, cached_calls: 6 })
          expect(results(replay)).toEqual(results(first))
          expect(fake.requests).toHaveLength(0)
        }))

      it.effect("a replay of prompts never answered holds at each slot with the reason, and calls nothing", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { model: "test-model", base_url: fake.url })
          yield* reset()
          const replay = yield* backtest(token, account.id, { ...day, mode: "replay" })
          expect(replay).toMatchObject({ status: "completed", model_calls: 0, cached_calls: 0, trades: [] })
          expect(replay.slots).toHaveLength(6)
          for (const slot of replay.slots) {
            expect(slot).toMatchObject({
              answer: "none",
              decisions: null,
              key: expect.stringMatching(/^[0-9a-f]{64}$/)
            })
            expect(slot.error).toMatch(/^not_cached: /)
          }
          expect(replay.metrics.total_pnl).toBe(0)
          expect(fake.requests).toHaveLength(0)
        }))

      it.effect("the model-call budget ends the run where it is spent, keeping the results so far", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { model: "test-model", base_url: fake.url })
          yield* reset(buy, keep, close)
          const done = yield* backtest(token, account.id, { ...day, max_model_calls: 2 })
          expect(done).toMatchObject({ status: "completed", model_calls: 2, cached_calls: 0, max_model_calls: 2 })
          expect(done.stop_reason).toBe(
            "max_model_calls: the budget of 2 model calls was spent before 2025-05-01T12:00:00.000Z; the results up to it are kept"
          )
          expect(done.slots).toHaveLength(2)
          expect(fake.requests).toHaveLength(2)
          // The long bought at the first slot is closed at the last bar stepped.
          expect(done.trades).toEqual([expect.objectContaining({ side: "long", exit_reason: "end_of_data" })])
          expect(done.equity_curve.at(-1).time).toBe(Date.parse("2025-05-01T11:00:00Z"))
        }))

      it.effect("a live round's call is cached: the same prompt again is answered from the cache, and a replay reproduces the live decision", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { model: "test-model", base_url: fake.url })
          // Prompts without the time or the market: every round, live or backtest, sends the very same call.
          const set = yield* call("PUT", `/api/account/${account.id}/ai-trader`, {
            token,
            body: { system_prompt: "Answer with the decision JSON.", user_template: "Decide for {symbols}." }
          })
          expect(set.status).toBe(200)
          yield* reset(buy)
          yield* call("POST", `/api/account/${account.id}/ai-trader/decide`, { token })
          const [live] = yield* waitForRounds(token, account.id, (r) => r.length === 1 && r[0].status === "completed")
          expect(live).toMatchObject({ outcome: "traded", cached: false, prompt_tokens: 42 })
          yield* call("POST", `/api/account/${account.id}/ai-trader/decide`, { token })
          const [again] = yield* waitForRounds(token, account.id, (r) => r.length === 2 && r[0].status === "completed")
          expect(again).toMatchObject({
            outcome: "traded",
            cached: true,
            prompt_tokens: 0,
            completion_tokens: 0,
            cost: 0,
            raw_answer: live.raw_answer
          })
          expect(fake.requests).toHaveLength(1)
          const replay = yield* backtest(token, account.id, { ...day, mode: "replay" })
          expect(replay).toMatchObject({ status: "completed", model_calls: 0, cached_calls: 6 })
          expect(replay.slots.every((s: any) => s.answer === "cache")).toBe(true)
          expect(replay.slots[0].decisions).toEqual(live.decisions)
          expect(replay.trades.length).toBe(1)
          expect(fake.requests).toHaveLength(1)
        }))

      it.effect("POST /api/account/:id/backtest: bad input 400 naming the field, another user's account 403, unknown 404, a MANUAL account 409", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          const url = `/api/account/${account.id}/backtest`
          for (
            const [body, path] of [
              [{ ...day, end: "2025-04-01T00:00:00Z" }, "end"],
              [{ ...day, mode: "live" }, "mode"],
              [{ ...day, max_model_calls: -1 }, "max_model_calls"],
              [{ ...day, interval_minutes: 0 }, "interval_minutes"],
              [{ start: day.start }, "end"],
              [{ ...day, bogus: 1 }, "bogus"]
            ] as const
          ) {
            const reply = yield* call("POST", url, { token, body })
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: any) => i.path)).toContain(path)
          }
          expectError(
            yield* call("POST", url, { token, body: { ...day, symbols: ["NOPE"] } }),
            422,
            "symbol_not_listed"
          )
          expectError(
            yield* call("POST", url, {
              token,
              body: { ...day, start: "2030-01-01T00:00:00Z", end: "2030-02-01T00:00:00Z" }
            }),
            422,
            "no_market_data"
          )
          const other = yield* signUp()
          expectError(yield* call("POST", url, { token: other.token, body: day }), 403, "forbidden")
          expectError(yield* call("POST", "/api/account/999999/backtest", { token, body: day }), 404, "not_found")
          const manual = yield* createAccount(token, { account_type: "MANUAL" })
          expectError(yield* call("POST", `/api/account/${manual.id}/backtest`, { token, body: day }), 409, "conflict")
          expectError(yield* call("GET", `/api/account/${account.id}/backtests/999999`, { token }), 404, "not_found")
          const done = yield* backtest(token, account.id, { ...day, mode: "replay" })
          expectError(
            yield* call("GET", `/api/account/${account.id}/backtests/${done.id}`, { token: other.token }),
            403,
            "forbidden"
          )
          const elsewhere = yield* createAccount(token)
          expectError(
            yield* call("GET", `/api/account/${elsewhere.id}/backtests/${done.id}`, { token }),
            404,
            "not_found"
          )
        }))

      it.effect("a replay reproduces the account's scheduled live rounds at their slots, though their prompts were the live account's", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          const settings = yield* call("PUT", `/api/account/${account.id}/ai-trader`, {
            token,
            body: { enabled: true, timeframe: "1m", interval_minutes: 1 }
          })
          const first = Date.parse(settings.body.next_run_at)
          // Three slots of the built-in model, one minute of the test clock each.
          for (const n of [1, 2, 3]) {
            yield* TestClock.adjust("1 minute")
            yield* waitForRounds(
              token,
              account.id,
              (r) => r.length >= n && r.every((x: any) => x.status === "completed"),
              TestClock.adjust("1 second")
            )
          }
          yield* call("PUT", `/api/account/${account.id}/ai-trader`, { token, body: { enabled: false } })
          const rounds = (yield* call("GET", `/api/account/${account.id}/decisions`, { token })).body.decisions
            .filter((r: any) => r.trigger === "schedule").reverse().slice(0, 3)
          expect(rounds).toHaveLength(3)
          const replay = yield* backtest(token, account.id, {
            start: new Date(first - 60_000).toISOString(),
            end: new Date(first + 2 * 60_000).toISOString(),
            timeframe: "1m",
            interval_minutes: 1,
            mode: "replay"
          })
          expect(replay).toMatchObject({ status: "completed", model_calls: 0, cached_calls: 3 })
          expect(replay.slots.map((s: any) => [s.time, s.answer, s.decisions])).toEqual(
            rounds.map((r: any, i: number) => [first + i * 60_000, "live", r.decisions])
          )
        }))

      // Last in the file: the model never answers, so the one worker stays on that run until the server stops.
      it.effect("GET /api/account/:id/backtests lists them newest first without results; a queued or running one can be cancelled, a finished one 409", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { model: "test-model", base_url: fake.url })
          const done = yield* backtest(token, account.id, { ...day, mode: "replay" })
          yield* reset(silent)
          const post = (body: Record<string, unknown>) =>
            Effect.map(call("POST", `/api/account/${account.id}/backtest`, { token, body }), (r) => r.body)
          const running = yield* post(day)
          const queued = yield* post(day)
          const url = (id: number) => `/api/account/${account.id}/backtests/${id}`
          const deadline = Date.now() + 30_000
          while ((yield* call("GET", url(running.id), { token })).body.status !== "running") {
            if (Date.now() > deadline) return yield* Effect.die(new Error("never running"))
            yield* realPause
          }
          const list = yield* call("GET", `/api/account/${account.id}/backtests`, { token })
          expect(list.status).toBe(200)
          expect(list.body.backtests.map((b: any) => [b.id, b.status])).toEqual([
            [queued.id, "queued"],
            [running.id, "running"],
            [done.id, "completed"]
          ])
          expect(list.body.backtests[2]).not.toHaveProperty("slots")
          expect((yield* call("GET", `/api/account/${account.id}/backtests?limit=1&offset=1`, { token })).body)
            .toMatchObject({ backtests: [{ id: running.id }] })
          for (const id of [queued.id, running.id]) {
            const cancelled = yield* call("POST", `${url(id)}/cancel`, { token })
            expect(cancelled.status).toBe(200)
            expect(cancelled.body).toMatchObject({ id, status: "cancelled" })
          }
          expectError(yield* call("POST", `${url(done.id)}/cancel`, { token }), 409, "conflict")
          const other = yield* signUp()
          expectError(
            yield* call("GET", `/api/account/${account.id}/backtests`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("POST", `${url(queued.id)}/cancel`, { token: other.token }), 403, "forbidden")
        }))
    })
  })
}
