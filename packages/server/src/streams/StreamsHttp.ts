import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { CurrentUser, type MarketEvent, type MarketFeed, MarketIntelligence, TradingApi } from "@trading-platform/core"
import { Effect, Exit, Option, Runtime, Scope } from "effect"
import { IncomingMessage } from "node:http"
import { Readable } from "node:stream"
import { presentedToken } from "../http/PresentedToken.js"
import { StreamLeases } from "./StreamLeases.js"

/** The session token of an authenticated request (authentication has checked it is there). */
export const sessionToken = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const presented = presentedToken(request)
  return presented._tag === "Token"
    ? Effect.succeed(presented.token)
    : Effect.dieMessage("an authenticated request presents a token")
})

// An event's data goes to every stream it reaches as the same object: its `data:` line is made once,
// not once per stream (JSON has no line breaks, so the line is the whole of it). The frame is what
// `Sse.encoder` writes: `id`, `event`, `data`.
const dataLines = new WeakMap<object, string>()
const frameOf = ({ data, event, id }: MarketEvent) => {
  let line = dataLines.get(data)
  if (line === undefined) {
    line = `data: ${JSON.stringify(data)}\n\n`
    dataLines.set(data, line)
  }
  return `id: ${id}\nevent: ${event}\n${line}`
}

/**
 * The response body of a stream: frames written as the feed has them, and only while the socket
 * takes them (the next ones wait for `read`, called once it drains), so nothing queues in Node's
 * buffers and a waiting stream holds no fiber. Ends when the feed does; `end` ends it from outside.
 */
const bodyOf = (feed: MarketFeed, onClose: () => void) => {
  let waiting = false
  const pump = () => {
    for (;;) {
      const events = feed.poll()
      if (events === undefined) return body.push(null)
      if (events.length === 0) {
        waiting = true
        return feed.onReady(() => {
          waiting = false
          if (!body.destroyed) pump()
        })
      }
      let more = true
      for (const event of events) more = body.push(frameOf(event))
      if (!more) return
    }
  }
  // Text in, text out: frames are not copied into buffers on their way to the response.
  const body = new Readable({
    encoding: "utf8",
    read() {
      if (!waiting) pump()
    },
    destroy(error, callback) {
      onClose()
      callback(error)
    }
  })
  body.once("end", onClose)
  return body
}

export const StreamsHttpLive = HttpApiBuilder.group(TradingApi, "streams", (handlers) =>
  Effect.gen(function*() {
    const intelligence = yield* MarketIntelligence
    const leases = yield* StreamLeases
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    return handlers.handle("marketIntelligence", ({ headers, urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentUser
        const token = yield* sessionToken
        const request = yield* HttpServerRequest.HttpServerRequest
        // The lease and the stream's subscriptions outlive the handler: they are held in a scope
        // the response's body closes when it ends, fails, or its client goes away.
        const scope = yield* Scope.make()
        const [lease, feed] = yield* Effect.zip(
          leases.acquire(token),
          intelligence.open(caller, urlParams, Option.fromNullable(headers["last-event-id"]))
        ).pipe(
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
        let closed = false
        const body = bodyOf(feed, () => {
          if (closed) return
          closed = true
          runFork(Scope.close(scope, Exit.void))
        })
        // A token revoked meanwhile ends the stream; the client's reconnection is then refused.
        lease.onEnded(() => body.push(null))
        const headersOut = { "cache-control": "no-cache", "x-accel-buffering": "no" }
        // Node hosts pipe the body into the response; fetch-style ones need a web stream.
        return HttpServerResponse.raw(
          request.source instanceof IncomingMessage
            ? body
            : (Readable.toWeb(body) as ReadableStream<string>).pipeThrough(new TextEncoderStream()),
          { contentType: "text/event-stream", headers: headersOut }
        )
      }))
  }))
