import { describe, expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { tradingProgram } from "../support/Backtests.js"
import { postSse } from "../support/Sse.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const defaults = platformOptions().assistant
const assistant = { ...defaults, chatPerHour: 3, insightJobs: { ...defaults.insightJobs, concurrency: 0 } }

const createProgram = (token: string) =>
  Effect.map(call("POST", "/api/programs", { token, body: { name: "every tenth bar", code: tradingProgram } }), (r) => {
    expect(r.status).toBe(201)
    return r.body.id as number
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`assistant over ${storage.name}`, () => {
    layer(TestServer({ storage, config: { assistant } }), { timeout: "120 seconds" })((it) => {
      it.effect("GET /api/ai/tools lists every tool; start_backtest is configured once the caller has a program", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const before = yield* call("GET", "/api/ai/tools", { token: alice.token })
          expect(before.status).toBe(200)
          expect(before.body.tools.map((t: any) => t.name)).toEqual([
            "get_prices",
            "get_klines",
            "get_indicators",
            "list_accounts",
            "list_programs",
            "start_backtest",
            "get_backtest",
            "start_optimization",
            "get_optimization",
            "get_ranking",
            "list_signals",
            "get_triggers",
            "get_news"
          ])
          for (const tool of before.body.tools) {
            expect(tool.id).toBe(tool.name)
            expect(tool.description.length).toBeGreaterThan(10)
          }
          expect(before.body.tools.find((t: any) => t.name === "start_backtest").configured).toBe(false)
          yield* createProgram(alice.token)
          const after = yield* call("GET", "/api/ai/tools", { token: alice.token })
          // Triggers need a pool, news an enabled feed.
          expect(after.body.tools.filter((t: any) => !t.configured).map((t: any) => t.name)).toEqual([
            "get_triggers",
            "get_news"
          ])
          expectError(yield* call("GET", "/api/ai/tools"), 401, "unauthorized")
        }))

      it.effect("POST /api/ai/chat streams the offline analyst's tool calls, its answer and done; the turn is stored", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const reply = yield* postSse("/api/ai/chat", alice.token, { message: "How is BTC doing on 4h?" })
          expect(reply.status).toBe(200)
          expect(reply.headers.get("content-type")).toContain("text/event-stream")
          const names = reply.events.map((e) => e.event)
          expect(names[0]).toBe("tool_call")
          expect(reply.events[0]!.data).toEqual({ name: "get_indicators", args: { symbols: ["BTC"], timeframe: "4h" } })
          expect(reply.events[1]!.event).toBe("tool_result")
          const btc = reply.events[1]!.data.result.symbols.BTC
          expect(btc.price).toBeGreaterThan(0)
          expect(names.at(-1)).toBe("done")
          const text = reply.events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")
          expect(text).toContain("built-in analyst")
          expect(text).toContain("BTC (4h)")
          const { conversation_id, message_id } = reply.events.at(-1)!.data
          const stored = yield* call("GET", `/api/ai/conversations/${conversation_id}/messages`, { token: alice.token })
          expect(stored.status).toBe(200)
          expect(stored.body.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
          expect(stored.body.messages[1]).toMatchObject({ id: message_id, content: text, prompt_tokens: null })
          expect(stored.body.messages[1].tool_calls).toEqual([
            {
              name: "get_indicators",
              args: { symbols: ["BTC"], timeframe: "4h" },
              result: reply.events[1]!.data.result
            }
          ])
        }))

      it.effect("the offline analyst reads the caller's programs, starts a backtest as the caller, and refuses another user's", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const programId = yield* createProgram(alice.token)
          const listed = yield* postSse("/api/ai/chat", alice.token, { message: "Which programs do I have?" })
          expect(listed.events[0]!.data.name).toBe("list_programs")
          expect(listed.events[1]!.data.result.programs[0].id).toBe(programId)
          const started = yield* postSse("/api/ai/chat", alice.token, {
            message: `backtest program ${programId} on ETH 1h`
          })
          const result = started.events.find((e) => e.event === "tool_result")!.data
          expect(result.name).toBe("start_backtest")
          expect(result.result).toMatchObject({
            status: "queued",
            symbol: "ETH",
            timeframe: "1h",
            program_id: programId
          })
          const asBob = yield* postSse("/api/ai/chat", bob.token, { message: `backtest ${result.result.id}` })
          expect(asBob.events.find((e) => e.event === "tool_result")!.data.result).toMatchObject({ code: "forbidden" })
          const unknown = yield* postSse("/api/ai/chat", bob.token, { message: `backtest program 999999 on BTC` })
          expect(unknown.events.find((e) => e.event === "tool_result")!.data.result).toMatchObject({
            code: "not_found"
          })
        }))

      it.effect("the offline analyst answers from the ranking table, the caller's signals and their triggers", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const reply = yield* postSse("/api/ai/chat", alice.token, {
            message: "Which coins rank best? Any signals or triggers fired?"
          })
          const results = Object.fromEntries(
            reply.events.filter((e) => e.event === "tool_result").map((e) => [e.data.name, e.data.result])
          )
          expect(Object.keys(results)).toEqual(["get_ranking", "list_signals", "get_triggers"])
          expect(results["get_ranking"].rows.length).toBe(5)
          expect(results["get_ranking"].rows[0].rank).toBe(1)
          expect(results["list_signals"]).toEqual({ pools: [], signals: [] })
          expect(results["get_triggers"]).toEqual({ triggers: [], next_offset: null })
          const text = reply.events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")
          expect(text).toContain(`#1 ${results["get_ranking"].rows[0].symbol}`)
          expect(text).toContain("None of your pools has fired yet.")
        }))

      it.effect("POST /api/ai/conversations answers 201 and continues a conversation; the list is newest first and paginated", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const first = yield* call("POST", "/api/ai/conversations", {
            token: alice.token,
            body: { message: "ETH outlook?", context: {} }
          })
          expect(first.status).toBe(201)
          expect(first.body).toMatchObject({ title: "ETH outlook?", message_count: 2 })
          const second = yield* call("POST", "/api/ai/conversations", {
            token: alice.token,
            body: { message: "my accounts", context: { symbol: "SOL" } }
          })
          // Test time stands still unless moved: the continued one is then the most recently active.
          yield* TestClock.adjust("1 minute")
          const more = yield* call("POST", "/api/ai/conversations", {
            token: alice.token,
            body: { message: "and SOL?", context: {}, conversation_id: first.body.id }
          })
          expect(more.status).toBe(201)
          expect(more.body).toMatchObject({ id: first.body.id, message_count: 4 })
          const list = yield* call("GET", "/api/ai/conversations", { token: alice.token })
          expect(list.body.conversations.map((c: any) => c.id)).toEqual([first.body.id, second.body.id])
          const paged = yield* call("GET", "/api/ai/conversations?limit=1&offset=1", { token: alice.token })
          expect(paged.body.conversations.map((c: any) => c.id)).toEqual([second.body.id])
          const messages = yield* call("GET", `/api/ai/conversations/${second.body.id}/messages`, {
            token: alice.token
          })
          // The context's symbol is what the analyst looked at.
          expect(messages.body.messages[1].tool_calls.map((c: any) => [c.name, c.args])).toEqual([
            ["list_accounts", {}],
            ["get_indicators", { symbols: ["SOL"], timeframe: "1h" }]
          ])
        }))

      it.effect("another user's conversation answers 403, an unknown one 404, and DELETE removes it", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const mine = yield* call("POST", "/api/ai/conversations", {
            token: alice.token,
            body: { message: "hello", context: {} }
          })
          const id = mine.body.id
          expectError(
            yield* call("GET", `/api/ai/conversations/${id}/messages`, { token: bob.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("DELETE", `/api/ai/conversations/${id}`, { token: bob.token }), 403, "forbidden")
          expectError(
            yield* call("POST", "/api/ai/conversations", {
              token: bob.token,
              body: { message: "hi", context: {}, conversation_id: id }
            }),
            403,
            "forbidden"
          )
          const chat = yield* postSse("/api/ai/chat", bob.token, { message: "hi", conversation_id: id })
          expect({ status: chat.status, code: chat.body.code }).toEqual({ status: 403, code: "forbidden" })
          expectError(
            yield* call("GET", "/api/ai/conversations/999999/messages", { token: alice.token }),
            404,
            "not_found"
          )
          const removed = yield* call("DELETE", `/api/ai/conversations/${id}`, { token: alice.token })
          expect(removed.status).toBe(204)
          expectError(
            yield* call("GET", `/api/ai/conversations/${id}/messages`, { token: alice.token }),
            404,
            "not_found"
          )
          expect((yield* call("GET", "/api/ai/conversations", { token: bob.token })).body.conversations).toEqual([])
        }))

      it.effect("bad input answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          expectError(
            yield* call("POST", "/api/ai/conversations", { token: alice.token, body: { message: "  ", context: {} } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", "/api/ai/conversations", { token: alice.token, body: { message: "hi" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", "/api/ai/chat", { token: alice.token, body: { message: "hi", conversation_id: "x" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", "/api/ai/chat", {
              token: alice.token,
              raw: "{",
              headers: { "content-type": "application/json" }
            }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("GET", "/api/ai/conversations/abc/messages", { token: alice.token }),
            400,
            "invalid_input"
          )
          expectError(yield* call("POST", "/api/ai/chat", { body: { message: "hi" } }), 401, "unauthorized")
        }))

      it.effect("past AI_CHAT_PER_HOUR messages in an hour the next answers 429 with Retry-After; deleting conversations does not reset it", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          for (let i = 0; i < 3; i++) {
            const r = yield* call("POST", "/api/ai/conversations", {
              token: alice.token,
              body: { message: `hi ${i}`, context: {} }
            })
            expect(r.status).toBe(201)
            yield* call("DELETE", `/api/ai/conversations/${r.body.id}`, { token: alice.token })
          }
          const limited = yield* call("POST", "/api/ai/conversations", {
            token: alice.token,
            body: { message: "one more", context: {} }
          })
          expectError(limited, 429, "rate_limited")
          expect(limited.body.retry_after).toBeGreaterThan(0)
          expect(limited.headers.get("retry-after")).toBe(String(limited.body.retry_after))
          const chat = yield* postSse("/api/ai/chat", alice.token, { message: "one more" })
          expect({ status: chat.status, code: chat.body.code }).toEqual({ status: 429, code: "rate_limited" })
          // Another user has their own quota.
          const bob = yield* signUp("bob")
          expect((yield* postSse("/api/ai/chat", bob.token, { message: "hi" })).status).toBe(200)
        }))
    })
  })
}
