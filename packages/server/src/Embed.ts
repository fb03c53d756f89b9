import { HttpApiBuilder, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { PlatformConfig, PlatformLive, type PlatformOptions } from "@trading-platform/core"
import { Effect, Layer, ManagedRuntime, type Tracer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { ApiLive } from "./ApiLive.js"
import { ConsoleLive } from "./console/ConsolePage.js"
import { FastLane } from "./http/FastLane.js"
import { LoginFailureStoreLive } from "./http/LoginFailureStoreLive.js"
import { requestContext } from "./http/RequestContext.js"

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
    // Failed logins on Redis with the rate limits when REDIS_URL is set.
    Layer.provide(PlatformLive.pipe(Layer.provide(LoginFailureStoreLive))),
    Layer.provide(options.config ? PlatformConfig.layer(options.config) : PlatformConfig.fromEnv),
    Layer.provide(options.tracer ? Layer.setTracer(options.tracer) : Layer.setTracerEnabled(false))
  )

export interface NodeHandler {
  /** Serves one request; paths start with `/api/` (and `/console` with `console: true`). */
  readonly handler: (request: IncomingMessage, response: ServerResponse) => void
  /** Closes the database and everything else the platform holds. */
  readonly dispose: () => Promise<void>
}

/**
 * The platform as a Node `(req, res)` handler, for hosts that own their `node:http` server
 * (or Express: mount it before any body parser, which would consume the body).
 */
export const makeNodeHandler = async (options: EmbedOptions = {}): Promise<NodeHandler> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      platform(options),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer,
      NodeHttpServer.layerContext
    )
  )
  const platformHandler = await runtime.runPromise(
    Effect.flatMap(HttpApiBuilder.httpApp, (app) => NodeHttpServer.makeHandler(app, requestContext))
  )
  // The fast lane does not make the API's spans, so a host's tracer sees every request on the full path.
  if (options.tracer) return { handler: platformHandler, dispose: () => runtime.dispose() }
  const lane = await runtime.runPromise(FastLane)
  return {
    handler: (request, response) => lane.answer(request, response) || platformHandler(request, response),
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
