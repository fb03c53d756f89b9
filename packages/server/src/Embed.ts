import { HttpApiBuilder, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { PlatformConfig, PlatformLive, type PlatformOptions } from "@trading-platform/core"
import { Layer, ManagedRuntime, type Tracer } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { ApiLive } from "./ApiLive.js"
import { ConsoleLive } from "./console/ConsolePage.js"
import { FastLane } from "./http/FastLane.js"
import { LoginFailureStoreLive } from "./http/LoginFailureStoreLive.js"
import { requestContext } from "./http/RequestContext.js"
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
    HttpApiBuilder.serve(requestContext).pipe(
      Layer.provide(EndStreamsOnShutdown),
      Layer.provideMerge(platform(options)),
      Layer.provide(NodeHttpServer.layer(() => relay, {}))
    )
  )
  const lane = await runtime.runPromise(FastLane)
  const platformHandler = (request: IncomingMessage, response: ServerResponse) => {
    relay.emit("request", request, response)
  }
  return {
    // The fast lane does not make the API's spans, so a host's tracer sees every request on the full path.
    handler: options.tracer
      ? platformHandler
      : (request, response) => lane.answer(request, response) || platformHandler(request, response),
    upgrade: (request, socket, head) => {
      relay.emit("upgrade", request, socket, head)
    },
    dispose: () => runtime.dispose()
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
  return { handler: (request) => handler(request), dispose }
}
