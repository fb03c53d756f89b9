import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PlatformLive } from "@trading-platform/core"
import { Effect, Layer } from "effect"
import { createServer, type Server } from "node:http"
import { ApiLive } from "./ApiLive.js"
import { LandingLive } from "./docs/Landing.js"
import { OpenApiLive } from "./docs/OpenApiDocument.js"
import { CorsLive } from "./http/Cors.js"
import { FastLane } from "./http/FastLane.js"
import { requestContext } from "./http/RequestContext.js"
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

/**
 * The reference server on `node:http`. The API (and its database) is built before the server
 * listens and released after it has closed, so on shutdown in-flight requests finish against an
 * open database. Answers CORS when `CORS_ORIGINS` is set. Serves `GET /openapi.json`, `GET /` (to `/docs`) and `GET /api/` too. Needs `PlatformConfig`.
 */
export const ServerLive = (listen: { readonly port: number; readonly host: string }) =>
  HttpApiBuilder.serve(requestContext).pipe(
    HttpServer.withLogAddress,
    Layer.provide(EndStreamsOnShutdown),
    Layer.provideMerge(nodeServer(listen)),
    Layer.provide(ApiLive),
    Layer.provide(CorsLive),
    Layer.provide(PlatformLive),
    Layer.provide(OpenApiLive),
    Layer.provide(LandingLive),
    // Effect's tracer costs ~1.4x throughput and the reference server exports spans nowhere.
    Layer.provide(Layer.setTracerEnabled(false))
  )
