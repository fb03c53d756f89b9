import { HttpApiBuilder, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ApiError, PlatformConfig, PlatformLive, type PlatformOptions, Unavailable } from "@trading-platform/core"
import { Layer, ManagedRuntime, Schema, type Tracer } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { ApiLive } from "./ApiLive.js"
import { ConsoleLive } from "./console/ConsolePage.js"
import { FastLane } from "./http/FastLane.js"
import { LoginFailureStoreLive } from "./http/LoginFailureStoreLive.js"
import { requestContext, requestIdFor } from "./http/RequestContext.js"
import { withoutRequestTracing, withRequestServices } from "./http/RequestRuntime.js"
import { EndStreamsOnShutdown } from "./streams/StreamsShutdown.js"

export interface EmbedOptions {
  /** The platform's settings; read from the environment (`docs/configuration.md`) when omitted. */
  readonly config?: PlatformOptions | undefined
  /** A tracer (e.g. from @effect/opentelemetry) to record spans with; tracing is off without one. */
  readonly tracer?: Tracer.Tracer | undefined
  /** Serve the web console at `/console` too (`docs/console.md`); hosts get only the API unless they ask. */
  readonly console?: boolean | undefined
}

const platform = (options: EmbedOptions) =>
  Layer.merge(FastLane.Default, options.console ? ConsoleLive : Layer.empty).pipe(
    Layer.provideMerge(ApiLive),
    // Failed logins on Redis with the rate limits when REDIS_URL is set. Its services are given
    // too, for ending the streams on dispose.
    Layer.provideMerge(PlatformLive.pipe(Layer.provide(LoginFailureStoreLive))),
    Layer.provide(options.config ? PlatformConfig.layer(options.config) : PlatformConfig.fromEnv),
    Layer.provide(options.tracer ? Layer.setTracer(options.tracer) : Layer.setTracerEnabled(false))
  )

/**
 * What a handler answers once disposed, at once rather than never: 503 `unavailable`, in the
 * envelope the contract encodes, with the request's id.
 */
const disposedAnswer = (incomingId: string | null | undefined) => {
  const id = requestIdFor(incomingId ?? undefined)
  const body = JSON.stringify(
    Schema.encodeSync(ApiError.Unavailable)(
      new Unavailable({ error: "The platform has been disposed: it serves no more requests", request_id: id })
    )
  )
  return { status: Unavailable.status, body, headers: { "content-type": "application/json", "x-request-id": id } }
}

export interface NodeHandler {
  /** Serves one request; paths start with `/api/` (and `/console` with `console: true`). */
  readonly handler: (request: IncomingMessage, response: ServerResponse) => void
  /**
   * Serves one WebSocket upgrade (`GET /api/ws`): attach it to the host's server with
   * `server.on("upgrade", platform.upgrade)`. A path the platform does not serve answers 404.
   */
  readonly upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  /** Ends open streams (WebSockets close with 1001), then closes the database and everything else the platform holds. */
  readonly dispose: () => Promise<void>
}

/**
 * A `node:http` server that never listens: the platform's request and upgrade listeners attach
 * to it as to the reference server's, and the host's events are handed to it. So an embedded
 * platform serves requests and WebSockets by the very code `npm start` runs.
 */
const relayServer = (): Server => {
  const server = createServer()
  server.listen = ((...args: Array<unknown>) => {
    const listening = args.find((arg) => typeof arg === "function") as (() => void) | undefined
    listening?.()
    return server
  }) as Server["listen"]
  server.address = () => ({ address: "127.0.0.1", family: "IPv4", port: 0 })
  return server
}

/**
 * The platform as a Node `(req, res)` handler and an `upgrade` handler, for hosts that own their
 * `node:http` server (or Express: mount it before any body parser, which would consume the body).
 */
export const makeNodeHandler = async (options: EmbedOptions = {}): Promise<NodeHandler> => {
  const relay = relayServer()
  const runtime = ManagedRuntime.make(
    withRequestServices(HttpApiBuilder.serve(requestContext)).pipe(
      // Without a tracer the platform's per-request span would be a no-op; with one, it is made.
      (serve) => options.tracer ? serve : withoutRequestTracing(serve),
      Layer.provide(EndStreamsOnShutdown),
      Layer.provideMerge(platform(options)),
      Layer.provide(NodeHttpServer.layer(() => relay, {}))
    )
  )
  const lane = await runtime.runPromise(FastLane)
  let disposed = false
  const platformHandler = (request: IncomingMessage, response: ServerResponse) => {
    relay.emit("request", request, response)
  }
  // The fast lane does not make the API's spans, so a host's tracer sees every request on the full path.
  const serve = options.tracer
    ? platformHandler
    : (request: IncomingMessage, response: ServerResponse) =>
      lane.answer(request, response) || platformHandler(request, response)
  const refused = (request: IncomingMessage) => disposedAnswer(request.headers["x-request-id"] as string | undefined)
  return {
    handler: (request, response) => {
      if (!disposed) return serve(request, response)
      const { body, headers, status } = refused(request)
      response.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) }).end(body)
    },
    upgrade: (request, socket, head) => {
      if (!disposed) return void relay.emit("upgrade", request, socket, head)
      const { body, headers, status } = refused(request)
      const head503 = Object.entries({ ...headers, "content-length": Buffer.byteLength(body), connection: "close" })
        .map(([name, value]) => `${name}: ${value}`).join("\r\n")
      socket.end(`HTTP/1.1 ${status} Service Unavailable\r\n${head503}\r\n\r\n${body}`)
    },
    dispose: () => {
      disposed = true
      return runtime.dispose()
    }
  }
}

export interface WebHandler {
  /** Serves one fetch-style request; paths start with `/api/` (and `/console` with `console: true`). */
  readonly handler: (request: Request) => Promise<Response>
  readonly dispose: () => Promise<void>
}

/** The platform as a fetch-style handler (`Request => Promise<Response>`), for any host that speaks it. */
export const makeWebHandler = (options: EmbedOptions = {}): WebHandler => {
  const { dispose, handler } = HttpApiBuilder.toWebHandler(Layer.mergeAll(platform(options), HttpServer.layerContext), {
    middleware: requestContext
  })
  let disposed = false
  return {
    handler: async (request) => {
      if (!disposed) return handler(request)
      const { body, headers, status } = disposedAnswer(request.headers.get("x-request-id"))
      return new Response(body, { status, headers })
    },
    dispose: () => {
      disposed = true
      return dispose()
    }
  }
}
