import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PlatformLive } from "@trading-platform/core"
import { Layer } from "effect"
import { createServer } from "node:http"
import { ApiLive } from "./ApiLive.js"
import { LandingLive } from "./docs/Landing.js"
import { OpenApiLive } from "./docs/OpenApiDocument.js"
import { CorsLive } from "./http/Cors.js"
import { requestContext } from "./http/RequestContext.js"
import { EndStreamsOnShutdown } from "./streams/StreamsShutdown.js"

/**
 * The reference server on `node:http`. The API (and its database) is built before the server
 * listens and released after it has closed, so on shutdown in-flight requests finish against an
 * open database. Answers CORS when `CORS_ORIGINS` is set. Serves `GET /openapi.json`, `GET /` (to `/docs`) and `GET /api/` too. Needs `PlatformConfig`.
 */
export const ServerLive = (listen: { readonly port: number; readonly host: string }) =>
  HttpApiBuilder.serve(requestContext).pipe(
    HttpServer.withLogAddress,
    Layer.provide(EndStreamsOnShutdown),
    Layer.provideMerge(NodeHttpServer.layer(createServer, listen)),
    Layer.provide(ApiLive),
    Layer.provide(CorsLive),
    Layer.provide(PlatformLive),
    Layer.provide(OpenApiLive),
    Layer.provide(LandingLive),
    // Effect's tracer costs ~1.4x throughput and the reference server exports spans nowhere.
    Layer.provide(Layer.setTracerEnabled(false))
  )
