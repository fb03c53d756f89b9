// On the real clock: the clients wait for reconnection by the retry rule.
import { FetchHttpClient } from "@effect/platform"
import { NodeSocket } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { createClient, LiveStreamError, makeClient } from "@trading-platform/client"
import { MarketHub } from "@trading-platform/core"
import type { MarketEvent } from "@trading-platform/core/contract"
import { Effect, Fiber, Queue, Stream } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import WebSocket from "ws"
import { evaluate, poolMetAt, StreamTestServer } from "../../server/test/support/StreamClients.js"
import { baseUrl, signUp } from "../../server/test/support/TestServer.js"

// Reconnections wait by the retry rule; short waits keep the tests quick.
const retry = { base: "300 millis", maxJitter: "10 millis" } as const

layer(StreamTestServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "live streams in the clients",
  (it) => {
    it.effect("Effect client: marketIntelligence decodes events and, when the server ends the stream, resumes with Last-Event-ID", () =>
      Effect.gen(function*() {
        const user = yield* signUp("client")
        const client = yield* makeClient({ baseUrl: yield* baseUrl, token: user.token, retry }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const events = yield* Queue.unbounded<MarketEvent>()
        const reading = yield* client.marketIntelligence(["BTC", "ETH"]).pipe(
          Stream.runForEach((event) => Queue.offer(events, event)),
          Effect.fork
        )
        const snapshot = yield* Queue.take(events)
        expect(snapshot.event).toBe("snapshot")
        if (snapshot.event !== "snapshot") return
        expect(Object.keys(snapshot.data.prices).sort()).toEqual(["BTC", "ETH"])

        // The server ends every stream (as on shutdown); a trigger fires before the client is back.
        yield* poolMetAt(user.token, ["SOL"])
        yield* Effect.flatMap(MarketHub, (hub) => hub.closeAll)
        const fired = (yield* evaluate).filter((t) => t.user_id === user.id)
        expect(fired).toHaveLength(1)
        const again = yield* Queue.take(events)
        expect(again.event).toBe("snapshot")
        const replayed = yield* Queue.take(events)
        expect(replayed).toMatchObject({
          event: "update",
          data: { kind: "trigger", trigger: { id: fired[0]!.id, symbol: "SOL" } }
        })
        yield* Fiber.interrupt(reading)
      }))

    it.effect("Effect client: a 4xx ends the stream at once with LiveStreamError", () =>
      Effect.gen(function*() {
        const user = yield* signUp("client4xx")
        const client = yield* makeClient({ baseUrl: yield* baseUrl, token: user.token, retry }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const error = yield* client.marketIntelligence(["NOPE"]).pipe(Stream.runDrain, Effect.flip)
        expect(error).toBeInstanceOf(LiveStreamError)
        expect(error).toMatchObject({ status: 422, code: "symbol_not_listed", retryable: false })
        expect(error.message).toBe(`HTTP 422 symbol_not_listed: ${error.error}`)
        expect(error.error).toMatch(/NOPE/)
      }))

    it.effect("Effect client: a second stream on the token fails with a message naming 429, rate_limited and the server's text", () =>
      Effect.gen(function*() {
        const user = yield* signUp("client429")
        const client = yield* makeClient({ baseUrl: yield* baseUrl, token: user.token, retry: false }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const events = yield* Queue.unbounded<MarketEvent>()
        const first = yield* client.marketIntelligence(["BTC"]).pipe(
          Stream.runForEach((event) => Queue.offer(events, event)),
          Effect.fork
        )
        expect((yield* Queue.take(events)).event).toBe("snapshot")
        const error = yield* client.marketIntelligence(["ETH"]).pipe(Stream.runDrain, Effect.flip)
        expect(error).toMatchObject({ status: 429, code: "rate_limited", retryable: true })
        expect(error.message).toBe(
          "HTTP 429 rate_limited: Only 1 concurrent stream per session token; close the open one first"
        )
        // A WebSocket on the same token: the server's error frame, its code and text.
        const refused = yield* client.subscribe(["triggers"]).pipe(
          Stream.runDrain,
          Effect.provide(NodeSocket.layerWebSocketConstructor),
          Effect.flip
        )
        expect(refused).toMatchObject({ code: "rate_limited", channel: null })
        expect(refused.message).toBe(
          "rate_limited: Only 1 concurrent stream per session token; close the open one first"
        )
        yield* Fiber.interrupt(first)
      }))

    it.effect("Effect client: an answer without the error envelope, and a refused or failed upgrade, say so", () =>
      Effect.gen(function*() {
        // A host that does not serve the platform: 502 in plain text, 404 to an upgrade.
        const host = createServer((_, response) => response.writeHead(502).end("Bad gateway"))
        host.on("upgrade", (_, socket) => socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"))
        yield* Effect.acquireRelease(
          Effect.async<void>((resume) => void host.listen(0, "127.0.0.1", () => resume(Effect.void))),
          () => Effect.async<void>((resume) => void host.close(() => resume(Effect.void)))
        )
        const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
        const client = yield* makeClient({ baseUrl: base, token: "t", retry: false }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const error = yield* client.marketIntelligence(["BTC"]).pipe(Stream.runDrain, Effect.flip)
        expect(error).toMatchObject({ status: 502, code: "unexpected_response", retryable: true })
        expect(error.message).toBe("HTTP 502 unexpected_response: The server answered without the error envelope")
        const ws = `ws://127.0.0.1:${(host.address() as AddressInfo).port}/api/ws`
        // Not retried, even with the retry rule on: the host does not route the upgrade.
        const retrying = yield* makeClient({ baseUrl: base, token: "t", retry }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const refused = yield* retrying.subscribe(["triggers"]).pipe(
          Stream.runDrain,
          Effect.provide(NodeSocket.layerWebSocketConstructor),
          Effect.flip
        )
        expect(refused).toMatchObject({ status: 404, code: "transport_error", retryable: false })
        expect(refused.message).toBe(`HTTP 404 transport_error: The server refused to upgrade ${ws} to a WebSocket`)
        // Nothing listens: the cause, as the socket told it.
        yield* Effect.async<void>((resume) => void host.close(() => resume(Effect.void)))
        const failed = yield* client.subscribe(["triggers"]).pipe(
          Stream.runDrain,
          Effect.provide(NodeSocket.layerWebSocketConstructor),
          Effect.flip
        )
        expect(failed).toMatchObject({ code: "transport_error", retryable: true, status: undefined })
        expect(failed.message).toBe(
          `transport_error: The WebSocket to ${ws} failed: connect ECONNREFUSED 127.0.0.1:${new URL(ws).port}`
        )
      }).pipe(Effect.scoped))

    it.effect("Promise client: a stream its reader leaves frees the token at once: the next opens without a retry", () =>
      Effect.gen(function*() {
        const user = yield* signUp("clientclose")
        // No retries: a 429 would fail the next stream rather than be waited out.
        const client = createClient({ baseUrl: yield* baseUrl, token: user.token, retry: false, WebSocket })
        // A refused stream would throw its LiveStreamError (429, or the WebSocket's rate_limited frame).
        const seen = yield* Effect.promise(async () => {
          const seen: Array<string> = []
          for (let round = 0; round < 3; round++) {
            for await (const event of client.marketIntelligence(["BTC"])) {
              seen.push(event.event)
              break
            }
            // The first price comes with the market's next read after subscribing.
            for await (const { channel } of client.subscribe(["prices:BTC"])) {
              seen.push(channel)
              break
            }
          }
          return seen
        })
        expect(seen).toEqual(["snapshot", "prices:BTC", "snapshot", "prices:BTC", "snapshot", "prices:BTC"])
      }))

    it.effect("Effect client: subscribe streams a WebSocket channel's events", () =>
      Effect.gen(function*() {
        const user = yield* signUp("clientws")
        const client = yield* makeClient({ baseUrl: yield* baseUrl, token: user.token, retry }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        yield* poolMetAt(user.token, ["ETH"])
        const reading = yield* client.subscribe(["triggers"]).pipe(
          Stream.take(1),
          Stream.runCollect,
          Effect.provide(NodeSocket.layerWebSocketConstructor),
          Effect.fork
        )
        // Evaluated until the subscription is in place (the pool fires once, so retry with new pools).
        let collected: ReadonlyArray<{ channel: string; data: any }> = []
        for (let i = 0; i < 50 && collected.length === 0; i++) {
          yield* poolMetAt(user.token, [["BTC", "ETH", "SOL", "DOGE", "XRP", "ADA"][i % 6]!])
          yield* evaluate
          const done = yield* Fiber.poll(reading)
          if (done._tag === "Some") collected = Array.from(yield* Fiber.join(reading))
          else yield* Effect.sleep("100 millis")
        }
        expect(collected[0]).toMatchObject({ channel: "triggers", data: { user_id: user.id } })
      }))

    it.effect("Effect client: a subscription whose message is over the server's cap (close 1009) fails at once, not retried", () =>
      Effect.gen(function*() {
        const user = yield* signUp("clientbig")
        const client = yield* makeClient({ baseUrl: yield* baseUrl, token: user.token, retry }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const error = yield* client.subscribe([`prices:${"X".repeat(70 * 1024)}`]).pipe(
          Stream.runDrain,
          Effect.provide(NodeSocket.layerWebSocketConstructor),
          Effect.flip
        )
        // `ws` refuses the frame on its header and closes without a reason: the code's meaning stands in.
        expect(error).toMatchObject({ closeCode: 1009, closeReason: undefined, retryable: false })
        expect(error.message).toBe("stream_ended: The WebSocket closed with 1009 (a message was too big)")
      }))

    it.effect("Promise client: assistantChat yields the answer's deltas, then done", () =>
      Effect.gen(function*() {
        const user = yield* signUp("promisechat")
        const client = createClient({ baseUrl: yield* baseUrl, token: user.token, retry })
        const events = yield* Effect.promise(async () => {
          const seen: Array<{ event: string; data: any }> = []
          for await (const event of client.assistantChat({ message: "How is BTC doing?" })) seen.push(event as any)
          return seen
        })
        expect(events.filter((e) => e.event === "delta").length).toBeGreaterThan(0)
        expect(events.at(-1)).toMatchObject({ event: "done", data: { conversation_id: expect.any(Number) } })
      }))

    it.effect("Effect client: assistantChat without a token fails with 401, not retried", () =>
      Effect.gen(function*() {
        const client = yield* makeClient({ baseUrl: yield* baseUrl, retry }).pipe(Effect.provide(FetchHttpClient.layer))
        const error = yield* client.assistantChat({ message: "hello" }).pipe(Stream.runDrain, Effect.flip)
        expect(error).toMatchObject({ status: 401, code: "unauthorized" })
        expect(error.message).toBe(`HTTP 401 unauthorized: ${error.error}`)
      }))

    it.effect("Promise client: async iterators over the SSE stream and the WebSocket", () =>
      Effect.gen(function*() {
        const user = yield* signUp("promisestream")
        const client = createClient({ baseUrl: yield* baseUrl, token: user.token, retry, WebSocket })
        const first = yield* Effect.promise(async () => {
          for await (const event of client.marketIntelligence(["BTC"])) return event
        })
        expect(first).toMatchObject({ event: "snapshot", data: { exchange: "venue1" } })

        const rejected = yield* Effect.promise(async () => {
          try {
            for await (const _ of client.marketIntelligence(["NOPE"])) return "an event"
            return "the end"
          } catch (e) {
            return e
          }
        })
        expect(rejected).toMatchObject({ status: 422, code: "symbol_not_listed" })

        const events = client.subscribe(["triggers"])[Symbol.asyncIterator]()
        const next = events.next()
        let event: IteratorResult<any> | undefined
        void next.then((r) => (event = r))
        for (let i = 0; i < 50 && event === undefined; i++) {
          yield* poolMetAt(user.token, [["BTC", "ETH", "SOL", "DOGE", "XRP", "ADA"][i % 6]!])
          yield* evaluate
          yield* Effect.sleep("100 millis")
        }
        expect(event?.value).toMatchObject({ channel: "triggers", data: { user_id: user.id } })
        yield* Effect.promise(() => events.return!())
      }))
  }
)
