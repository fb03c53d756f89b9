import { HttpApiBuilder, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { BackgroundStart, PlatformLive } from "@trading-platform/core"
import { Clock, Deferred, Duration, Effect, Fiber, Layer } from "effect"
import { createServer, type Server } from "node:http"
import { ApiLive } from "./ApiLive.js"
import { LandingLive } from "./docs/Landing.js"
import { OpenApiLive } from "./docs/OpenApiDocument.js"
import { CorsLive } from "./http/Cors.js"
import { FastLane } from "./http/FastLane.js"
import { LoginFailureStoreLive } from "./http/LoginFailureStoreLive.js"
import { requestContext } from "./http/RequestContext.js"
import { withoutRequestTracing, withRequestServices } from "./http/RequestRuntime.js"
import { EndStreamsOnShutdown } from "./streams/StreamsShutdown.js"

/**
 * `node:http`'s server with the fast lane in front: a request the lane answers is not emitted to
 * the platform's listener, which `NodeHttpServer` attaches itself (with its WebSocket upgrades).
 */
const nodeServer = (listen: { readonly port: number; readonly host: string }) =>
  Layer.unwrapEffect(Effect.map(FastLane, (lane) =>
    NodeHttpServer.layer(() => {
      const server = createServer()
      const emit = server.emit
      server.emit = function(this: Server, event: string | symbol, ...args: Array<any>) {
        return (event === "request" && lane.answer(args[0], args[1])) || emit.apply(this, [event, ...args] as any)
      } as Server["emit"]
      return server
    }, listen))).pipe(Layer.provide(FastLane.Default))

// The first requests (a health probe, a client's first calls) come before the background work's
// first passes, which on PGlite share its one connection with them. A second of wall time, not of
// the Clock: it spaces out the work of starting, and a test's clock need not move for it to pass.
const backgroundAfter = Effect.sleep(Duration.seconds(1)).pipe(Effect.withClock(Clock.make()))

// The platform's services, with failed logins on Redis beside the rate limits when REDIS_URL is set.
const platform = PlatformLive.pipe(Layer.provide(LoginFailureStoreLive))

/**
 * The reference server on `node:http`. The API (and its database) is built before the server
 * listens and released after it has closed, so on shutdown in-flight requests finish against an
 * open database. Background work starts a second after it listens (`BackgroundStart`). Answers CORS when
 * `CORS_ORIGINS` is set. Serves `GET /openapi.json`, `GET /` (to `/docs`) and `GET /api/` too. Needs `PlatformConfig`.
 */
export const ServerLive = (listen: { readonly port: number; readonly host: string }) =>
  Layer.unwrapEffect(Effect.map(Deferred.make<void>(), (listening) => serverListening(listen, listening)))

const serverListening = (
  listen: { readonly port: number; readonly host: string },
  listening: Deferred.Deferred<void>
) =>
  withRequestServices(HttpApiBuilder.serve(requestContext)).pipe(
    // Its tracer is off (below), so the platform's per-request span would be a no-op.
    withoutRequestTracing,
    HttpServer.withLogAddress,
    Layer.tap(() => Deferred.succeed(listening, undefined)),
    Layer.provide(EndStreamsOnShutdown),
    Layer.provideMerge(nodeServer(listen)),
    Layer.provide(ApiLive),
    Layer.provide(CorsLive),
    Layer.provide(platform),
    Layer.provide(OpenApiLive),
    Layer.provide(LandingLive),
    // Effect's tracer costs ~1.4x throughput and the reference server exports spans nowhere.
    Layer.provide(Layer.setTracerEnabled(false)),
    // Opened once, by a fiber of its own: a loop that starts again later (the signal engine after
    // `stop`) finds it open, and a waiter's interruption does not close it for the others.
    Layer.provide(
      Layer.scoped(
        BackgroundStart,
        Effect.map(Effect.forkScoped(Effect.zipRight(Deferred.await(listening), backgroundAfter)), Fiber.join)
      )
    )
  )
