import { describe, expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import type { ServerResponse } from "node:http"
import { fake, FakeProvider, reset, type Script, status } from "../support/FakeModel.js"
import { insightSettled } from "../support/Insights.js"
import { parseSse, postSse } from "../support/Sse.js"
import { baseUrl, call, signUp, TestServer } from "../support/TestServer.js"

const apiKey = "sk-test-provider-secret-0123456789"

const Server = Layer.unwrapScoped(Effect.map(FakeProvider, () =>
  TestServer({
    config: {
      assistant: {
        ...platformOptions().assistant,
        insightJobs: { ...platformOptions().assistant.insightJobs, concurrency: 1 },
        provider: Option.some({ baseUrl: fake.url, model: "test-model", apiKey: Option.some(Redacted.make(apiKey)) }),
        timeout: Duration.seconds(3),
        maxToolCalls: 3
      },
      // The same local server serves a news feed, on loopback: the operator's allow list lets it through.
      fetch: { allowHosts: ["127.0.0.1"] }
    }
  })))

const frame = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`
const chunk = (delta: unknown, finish_reason: string | null = null) =>
  frame({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "test-model",
    choices: [{ index: 0, delta, finish_reason }]
  })
const usage = frame({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "test-model",
  choices: [],
  usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 }
})
const stream = (...frames: Array<string>): Script => (_, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const f of frames) res.write(f)
  res.end()
}
const text = (...pieces: Array<string>) =>
  stream(
    chunk({ role: "assistant", content: "" }),
    ...pieces.map((content) => chunk({ content })),
    chunk({}, "stop"),
    usage,
    "data: [DONE]\n\n"
  )
const toolCall = (name: string, argumentPieces: Array<string>) =>
  stream(
    chunk({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }]
    }),
    ...argumentPieces.map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n"
  )
/** One answer that calls `name` `count` times at once. */
const toolCalls = (name: string, args: string, count: number) =>
  stream(
    chunk({
      role: "assistant",
      content: null,
      tool_calls: Array.from({ length: count }, (_, index) => ({
        index,
        id: `call_${index}`,
        type: "function",
        function: { name, arguments: args }
      }))
    }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n"
  )
/** Opens a streamed answer with its first piece; the script goes on from there. */
const begin = (res: ServerResponse, content: string) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  res.write(chunk({ role: "assistant", content }))
}

/** Starts a chat, and waits until the provider has its request; the reply's text comes once it ends. */
const chatUnderway = (token: string, message: string) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    const reply = fetch(`${base}/api/ai/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ message })
    }).then((r) => r.text())
    while (fake.requests.length === 0) yield* Effect.sleep("20 millis")
    return reply
  })

const deltas = (events: ReadonlyArray<{ event: string; data: any }>) =>
  events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")

/** The newest conversation's two messages, once the reply is stored (it is stored as the stream ends). */
const storedTurn = (token: string) =>
  Effect.gen(function*() {
    const list = yield* call("GET", "/api/ai/conversations", { token })
    const id = list.body.conversations[0]?.id
    return id === undefined
      ? []
      : (yield* call("GET", `/api/ai/conversations/${id}/messages`, { token })).body.messages
  }).pipe(
    Effect.delay("50 millis"),
    Effect.repeat({ until: (messages: Array<any>) => messages.length === 2 }),
    Effect.timeout("10 seconds")
  )

describe("assistant on an OpenAI-compatible provider (local fake server)", () => {
  // Real time: retries wait out Retry-After and the timeout is real.
  layer(Server, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("streamed text becomes delta events and done; usage is stored; the key is sent as a bearer token and never answered", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(text("Hello", " there"))
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "hi", context: { symbol: "BTC" } })
        expect(reply.events.map((e) => e.event)).toEqual(["delta", "delta", "done"])
        expect(deltas(reply.events)).toBe("Hello there")
        const sent = fake.requests[0]!
        expect(sent.authorization).toBe(`Bearer ${apiKey}`)
        expect(sent.body).toMatchObject({ model: "test-model", stream: true })
        expect(sent.body.tools.map((t: any) => t.function.name)).toContain("get_prices")
        expect(sent.body.messages.at(-1)).toEqual({ role: "user", content: "hi" })
        expect(sent.body.messages[0].content).toContain("Context: {\"symbol\":\"BTC\"}")
        const stored = yield* call(
          "GET",
          `/api/ai/conversations/${reply.events.at(-1)!.data.conversation_id}/messages`,
          { token: alice.token }
        )
        expect(stored.body.messages[1]).toMatchObject({
          content: "Hello there",
          prompt_tokens: 42,
          completion_tokens: 7
        })
        const tools = yield* call("GET", "/api/ai/tools", { token: alice.token })
        for (const r of [reply.text, stored.text, tools.text]) expect(r).not.toContain(apiKey)
      }))

    it.effect("a tool call streamed in pieces runs as the caller, its result goes back to the model, and the answer follows", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(toolCall("get_prices", ["{\"symbols\":", "[\"BTC\"]}"]), text("BTC is fine."))
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "BTC?" })
        expect(reply.events.map((e) => e.event)).toEqual(["tool_call", "tool_result", "delta", "done"])
        expect(reply.events[0]!.data).toEqual({ name: "get_prices", args: { symbols: ["BTC"] } })
        expect(reply.events[1]!.data.result.prices.BTC.price).toBeGreaterThan(0)
        const second = fake.requests[1]!.body.messages
        expect(second.at(-2)).toMatchObject({
          role: "assistant",
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: "get_prices", arguments: "{\"symbols\":[\"BTC\"]}" }
          }]
        })
        expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" })
        expect(JSON.parse(second.at(-1).content).prices.BTC.price).toBe(reply.events[1]!.data.result.prices.BTC.price)
      }))

    it.effect("arguments that do not decode through the tool's schema are refused, and the model is told why", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(
          toolCall("get_klines", ["{\"symbol\": 42, \"limit\": 100000}"]),
          toolCall("drop_tables", ["{}"]),
          text("Sorry.")
        )
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "candles" })
        const results = reply.events.filter((e) => e.event === "tool_result").map((e) => e.data)
        expect(results.map((r) => [r.name, r.result.code])).toEqual([["get_klines", "invalid_input"], [
          "drop_tables",
          "invalid_input"
        ]])
        expect(reply.events.at(-1)!.event).toBe("done")
      }))

    it.effect("one message makes at most its budget of tool calls (3 here); later calls answer rate_limited unrun, and the next message has a new budget", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(
          toolCalls("get_prices", "{\"symbols\":[\"BTC\"]}", 2),
          toolCalls("get_prices", "{\"symbols\":[\"ETH\"]}", 3),
          text("Done."),
          toolCalls("get_prices", "{\"symbols\":[\"SOL\"]}", 3),
          text("Again.")
        )
        const first = yield* postSse("/api/ai/chat", alice.token, { message: "prices, many times" })
        const results = first.events.filter((e) => e.event === "tool_result").map((e) => e.data.result)
        expect(results.map((r) => r.code ?? "ran")).toEqual(["ran", "ran", "ran", "rate_limited", "rate_limited"])
        expect(results[3].error).toBe("This message has used its 3 tool calls; answer with what you have")
        // The model is told, call by call, and answers in words.
        const told = fake.requests[2]!.body.messages.filter((m: any) => m.role === "tool")
        expect(told.map((m: any) => JSON.parse(m.content).code ?? "ran")).toEqual(results.map((r) => r.code ?? "ran"))
        expect(deltas(first.events)).toBe("Done.")
        const second = yield* postSse("/api/ai/chat", alice.token, { message: "once more" })
        expect(second.events.filter((e) => e.event === "tool_result").map((e) => e.data.result.code ?? "ran")).toEqual([
          "ran",
          "ran",
          "ran"
        ])
      }))

    it.effect("a 429 with Retry-After is waited out and retried", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(status(429, { "retry-after": "1" }), text("after the wait"))
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "hi" })
        expect(fake.requests.length).toBe(2)
        expect(deltas(reply.events)).toBe("after the wait")
        expect(reply.events.at(-1)!.event).toBe("done")
      }))

    it.effect("a provider that keeps answering 500 ends the stream with an upstream_error event; a 401 is not retried", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset(status(500), status(500), status(500))
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "hi" })
        expect(fake.requests.length).toBe(3)
        expect(reply.events).toEqual([{
          event: "error",
          data: { code: "upstream_error", error: "The language model provider answered 500" }
        }])
        yield* reset(status(401), text("never"))
        const refused = yield* postSse("/api/ai/chat", alice.token, { message: "hi" })
        expect(fake.requests.length).toBe(1)
        expect(refused.events[0]!.data.code).toBe("upstream_error")
        // POST /api/ai/conversations answers the failure as a 502 envelope.
        yield* reset(status(500), status(500), status(500))
        const converse = yield* call("POST", "/api/ai/conversations", {
          token: alice.token,
          body: { message: "hi", context: {} }
        })
        expect({ status: converse.status, code: converse.body.code }).toEqual({ status: 502, code: "upstream_error" })
      }))

    it.effect("a cut connection becomes an error event, and what was said before is stored", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset((_, res) => {
          begin(res, "Partial answer")
          setTimeout(() => res.destroy(), 50)
        })
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "hi" })
        expect(reply.events.map((e) => e.event)).toEqual(["delta", "error"])
        expect(reply.events[1]!.data.code).toBe("upstream_error")
        const list = yield* call("GET", "/api/ai/conversations", { token: alice.token })
        const stored = yield* call("GET", `/api/ai/conversations/${list.body.conversations[0].id}/messages`, {
          token: alice.token
        })
        expect(stored.body.messages[1]).toMatchObject({ role: "assistant", content: "Partial answer" })
      }))

    it.effect("a provider that never answers ends the stream with upstream_timeout", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset((_, res) => setTimeout(() => res.destroy(), 10_000))
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "hi" })
        expect(reply.events).toEqual([{
          event: "error",
          data: { code: "upstream_timeout", error: "The language model provider did not answer in time" }
        }])
      }))

    it.effect("a second chat on the same token while one streams answers 429; once it ends the token may stream again", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        let finish = () => {}
        yield* reset((_, res) => {
          begin(res, "first")
          finish = () => res.end(chunk({}, "stop") + "data: [DONE]\n\n")
        }, text("third"))
        const first = yield* chatUnderway(alice.token, "first")
        const second = yield* postSse("/api/ai/chat", alice.token, { message: "second" })
        expect({ status: second.status, code: second.body.code }).toEqual({ status: 429, code: "rate_limited" })
        expect(second.headers.get("retry-after")).toBe(String(second.body.retry_after))
        finish()
        expect(yield* Effect.promise(() => first)).toContain("event: done")
        const third = yield* postSse("/api/ai/chat", alice.token, { message: "third" })
        expect(third.events.at(-1)!.event).toBe("done")
      }))

    it.effect("a chat whose token is revoked mid-answer ends at the stream lease's next renewal", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        // A provider that keeps talking and never finishes: a piece every half second, within its timeout.
        yield* reset((_, res) => {
          begin(res, "")
          const talk = setInterval(() => res.write(chunk({ content: "more " })), 500)
          res.on("close", () => clearInterval(talk))
        })
        const reply = yield* chatUnderway(alice.token, "go on")
        expect((yield* call("POST", "/api/users/logout", { token: alice.token })).status).toBe(204)
        // Renewals are 5 s apart: the answer ends within that, without done or an error event.
        const events = parseSse(yield* Effect.promise(() => reply).pipe(Effect.timeout("10 seconds")))
        expect(deltas(events)).toContain("more")
        expect(events.map((e) => e.event).filter((e) => e !== "delta")).toEqual([])
        // What was said until then is kept, as when a client goes away.
        const login = yield* call("POST", "/api/users/login", {
          body: { email: alice.email, password: alice.password }
        })
        const token = login.body.session_token
        const stored = yield* storedTurn(token)
        expect(stored[1].role).toBe("assistant")
        expect(stored[1].content.startsWith(deltas(events))).toBe(true)
      }))

    it.effect("a client that goes away mid-answer leaves what was said stored", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* reset((_, res) => {
          begin(res, "Said before leaving")
        })
        const base = yield* baseUrl
        yield* Effect.promise(async () => {
          const abort = new AbortController()
          const response = await fetch(`${base}/api/ai/chat`, {
            method: "POST",
            headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
            body: JSON.stringify({ message: "tell me" }),
            signal: abort.signal
          })
          const reader = response.body!.getReader()
          await reader.read()
          abort.abort()
        })
        const stored = yield* storedTurn(alice.token)
        expect(stored[1]).toMatchObject({ role: "assistant", content: "Said before leaving" })
      }))
    it.effect("an insight asks the model with the facts and news; its structured answer, decoded, is the result (without fields not asked for)", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const answer = {
          sentiment: "bearish",
          summary: "ETH is heavy under its averages.",
          key_levels: { support: [3000], resistance: [3600, 3800] },
          drivers: ["Below SMA(20)."],
          risks: ["Oversold bounce."],
          sources: [{ name: "indicators", detail: "SMA(20) above price" }]
        }
        // In pieces and in a code fence, as models answer.
        // An uncalibrated probability the model volunteers is dropped, not passed on.
        const json = JSON.stringify({ ...answer, probability_up: 0.31 })
        // The same local server serves the owner's news feed first.
        const feed = `<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title><item>
          <title>ETH upgrade lands</title><link>http://news.test/provider-eth</link><description>Fees fell.</description>
          </item></channel></rss>`
        yield* reset(
          (_, res) => res.writeHead(200, { "content-type": "application/rss+xml" }).end(feed),
          text("```json\n", json.slice(0, 40), json.slice(40), "\n```")
        )
        yield* call("POST", "/api/news/sources", {
          token: alice.token,
          body: { name: "Local", url: `${fake.url}/feed` }
        })
        expect((yield* call("POST", "/api/news/refresh", { token: alice.token })).body.sources[0].new_items).toBe(1)
        const queued = yield* call("POST", "/api/ai/insight", {
          token: alice.token,
          body: { symbol: "ETH", timeframe: "4h", prompt: "Should I worry?" }
        })
        const done = yield* insightSettled(alice.token, queued.body.task_id)
        expect(done.body.status).toBe("completed")
        expect(done.body.result).toEqual({
          symbol: "ETH",
          timeframe: "4h",
          ...answer,
          analyst: "test-model",
          generated_at: expect.any(String)
        })
        const sent = fake.requests[1]!.body
        expect(sent.tools).toBeUndefined()
        expect(sent.messages[0]).toMatchObject({ role: "system" })
        expect(sent.messages[0].content).toContain("key_levels")
        expect(sent.messages[0].content).not.toContain("probability_up")
        const facts = JSON.parse(sent.messages[1].content)
        expect(facts).toMatchObject({ symbol: "ETH", timeframe: "4h", question: "Should I worry?" })
        expect(facts.news).toEqual([
          {
            title: "ETH upgrade lands",
            summary: "Fees fell.",
            published_at: null,
            link: "http://news.test/provider-eth"
          }
        ])
        expect(facts.price).toBeGreaterThan(0)
        expect(facts.candles.length).toBe(100)
        expect(facts.indicators.rsi_14).toEqual(expect.any(Number))
      }))

    it.effect("an insight whose model answer does not decode, or whose provider keeps failing, falls back to the built-in analyst and says why", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const submit = Effect.flatMap(
          call("POST", "/api/ai/insight", { token: alice.token, body: { symbol: "BTC" } }),
          (queued) => insightSettled(alice.token, queued.body.task_id)
        )
        const fallbackOf = (result: any) => result.sources.find((s: any) => s.name === "fallback")?.detail

        // Prose, and an object out of range: neither is trusted.
        for (const said of ["BTC looks great, buy!", JSON.stringify({ sentiment: "very bullish", summary: "Up." })]) {
          yield* reset(text(said))
          const done = yield* submit
          expect(done.body.status).toBe("completed")
          expect(done.body.result.analyst).toBe("built-in analyst")
          expect(done.body.result.summary).toContain("Built-in analyst: BTC on 1h")
          expect(fallbackOf(done.body.result)).toBe(
            "test-model: Its answer did not decode as an insight. The built-in analyst's rules answered instead."
          )
        }

        // A 500 is retried twice, then the job completes with the built-in reading rather than failing.
        yield* reset(status(500), status(500), status(500))
        const failed = yield* submit
        expect(fake.requests.length).toBe(3)
        expect(failed.body.status).toBe("completed")
        expect(failed.body.result.analyst).toBe("built-in analyst")
        expect(fallbackOf(failed.body.result)).toBe(
          "test-model: The language model provider answered 500. The built-in analyst's rules answered instead."
        )
      }))
  })
})
