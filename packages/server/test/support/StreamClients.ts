import * as Sse from "@effect/experimental/Sse"
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect } from "@effect/vitest"
import { PlatformLive, type PlatformOptions, SignalEngine } from "@trading-platform/core"
import { TestConfig, type TestStorage, testStorages } from "@trading-platform/core/testing"
import { ApiLive, EndStreamsOnShutdown, requestContext } from "@trading-platform/server"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import WebSocket from "ws"
import { baseUrl, call } from "./TestServer.js"

/**
 * The real server on a random port, like `TestServer`, with the platform's services (the hub, the
 * signal engine) also given to the test.
 */
export const StreamTestServer = (options: { storage?: TestStorage; config?: Partial<PlatformOptions> } = {}) =>
  HttpApiBuilder.serve(requestContext).pipe(
    Layer.provide(EndStreamsOnShutdown),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ApiLive),
    Layer.provideMerge(PlatformLive),
    Layer.provideMerge(TestConfig(options.storage ?? testStorages[0]!, options.config))
  )

/** A pool of `token`'s that is met at once on `symbols` (open interest above zero), so the next round fires it per symbol. */
export const poolMetAt = (token: string, symbols: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const signal = yield* call("POST", "/api/signals", {
      token,
      body: {
        signal_name: "any open interest",
        trigger_condition: { metric: "oi", operator: "gt", threshold: 0, time_window: "1m" }
      }
    })
    expect(signal.status).toBe(201)
    const pool = yield* call("POST", "/api/signals/pools", {
      token,
      body: { pool_name: `pool ${symbols.join(" ")}`, signal_ids: [signal.body.id], symbols }
    })
    expect(pool.status).toBe(201)
    return pool.body.id as number
  })

/** One round of the signal engine now. */
export const evaluate = Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)

export interface ReadEvent {
  readonly event: string
  readonly id: string
  readonly data: any
}

/** A polling wait on real time, for what a real socket delivers. */
const until = async <A>(what: string, check: () => A | undefined, deadlineMs: number): Promise<A> => {
  const end = Date.now() + deadlineMs
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export interface SseConnection {
  readonly status: number
  readonly headers: Headers
  /** The JSON body of an answer that is not a stream. */
  readonly body: any
  /** The next event not yet taken, optionally the next one of a given name. */
  readonly next: (event?: string, deadlineMs?: number) => Promise<ReadEvent>
  /** Resolves when the server has ended the stream. */
  readonly ended: Promise<void>
  readonly close: () => void
}

/** Opens the market-intelligence stream over real HTTP (the test server's, or `options.base`) and parses its events as they come. */
export const openSse = (query: string, options: { token?: string; lastEventId?: string; base?: string } = {}) =>
  Effect.flatMap(options.base ? Effect.succeed(options.base) : baseUrl, (base) => openSseAt(base, query, options))

/** `openSse` on the server at `base`. */
export const openSseAt = (base: string, query: string, options: { token?: string; lastEventId?: string } = {}) =>
  Effect.promise(async (): Promise<SseConnection> => {
    const controller = new AbortController()
    const headers: Record<string, string> = {}
    if (options.token) headers["authorization"] = `Bearer ${options.token}`
    if (options.lastEventId) headers["last-event-id"] = options.lastEventId
    const response = await fetch(`${base}/api/market-intelligence/stream${query}`, {
      headers,
      signal: controller.signal
    })
    if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
      const text = await response.text()
      const noEvents = () => Promise.reject(new Error(`no stream: ${response.status} ${text}`))
      return {
        status: response.status,
        headers: response.headers,
        body: JSON.parse(text),
        next: noEvents,
        ended: Promise.resolve(),
        close: () => {}
      }
    }
    const events: Array<ReadEvent> = []
    const parser = Sse.makeParser((e) => {
      if (e._tag === "Event") events.push({ event: e.event, id: e.id ?? "", data: JSON.parse(e.data) })
    })
    const ended = (async () => {
      const decoder = new TextDecoder()
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }))
        }
      } catch {
        // aborted by the test
      }
    })()
    const next = (event?: string, deadlineMs = 5_000) =>
      until(`event ${event ?? "any"}`, () => {
        while (events.length > 0) {
          const e = events.shift()!
          if (event === undefined || e.event === event) return e
        }
        return undefined
      }, deadlineMs)
    return {
      status: response.status,
      headers: response.headers,
      body: undefined,
      next,
      ended,
      close: () => controller.abort()
    }
  })

/**
 * Opens the stream again and again while it answers 429: for a lease let go by another process
 * (another replica's Redis connection) or one left to expire. In one process a closed stream's
 * lease is let go at once, so a test there opens with `openSse`.
 */
export const openSseWhenFree = (
  query: string,
  options: { token?: string; lastEventId?: string; base?: string; deadlineMs?: number } = {}
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + (options.deadlineMs ?? 5_000)
    for (;;) {
      const sse = yield* openSse(query, options)
      if (sse.status !== 429 || Date.now() > deadline) return sse
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
  })

export interface WsConnection {
  readonly socket: WebSocket
  /** The next message not yet taken that matches. */
  readonly next: (match?: (m: any) => boolean, deadlineMs?: number) => Promise<any>
  readonly send: (message: unknown) => void
  /** The close code, once the socket has closed. */
  readonly closed: Promise<{ code: number; reason: string }>
  /** The HTTP status when the server refused to upgrade. */
  readonly refused: Promise<number | undefined>
  /** The status and JSON body of the answer when the server refused to upgrade. */
  readonly refusal: Promise<{ readonly status: number; readonly body: any } | undefined>
}

/** Opens the test server's `GET /api/ws` over a real WebSocket; answers once it is open or refused. */
export const openWs = (query = "", headers: Record<string, string> = {}) =>
  Effect.flatMap(baseUrl, (base) => openWsAt(base, query, headers))

/** `openWs` on the server at `base`. */
export const openWsAt = (base: string, query = "", headers: Record<string, string> = {}) =>
  Effect.promise(async (): Promise<WsConnection> => {
    const socket = new WebSocket(`${base.replace("http", "ws")}/api/ws${query}`, { headers })
    const messages: Array<any> = []
    socket.on("message", (data) => messages.push(JSON.parse(String(data))))
    socket.on("error", () => {})
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on("close", (code, reason) => resolve({ code, reason: String(reason) }))
    )
    const refusal = new Promise<{ status: number; body: any } | undefined>((resolve) => {
      socket.on("unexpected-response", (_req, res) => {
        let text = ""
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }))
      })
      socket.on("open", () => resolve(undefined))
      socket.on("close", () => resolve(undefined))
    })
    const refused = refusal.then((r) => r?.status)
    await refused
    const next = (match: (m: any) => boolean = () => true, deadlineMs = 5_000) =>
      until("a WebSocket message", () => {
        const i = messages.findIndex(match)
        return i === -1 ? undefined : messages.splice(i, 1)[0]
      }, deadlineMs)
    return {
      socket,
      next,
      send: (message) => socket.send(typeof message === "string" ? message : JSON.stringify(message)),
      closed,
      refused,
      refusal
    }
  })

export { until }
