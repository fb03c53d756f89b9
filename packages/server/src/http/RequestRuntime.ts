import { Etag, FileSystem, HttpApi, HttpMiddleware, HttpPlatform, HttpServer, Path } from "@effect/platform"
import { Context, Effect, Layer } from "effect"

/**
 * What a request fiber needs in its context: the server, the platform's default services and the
 * API (whose handlers, middleware and error encoder carry the services they were built with).
 */
const requestServices = [
  HttpServer.HttpServer,
  HttpPlatform.HttpPlatform,
  FileSystem.FileSystem,
  Path.Path,
  Etag.Generator,
  HttpApi.Api
] as const

type RequestServices = Context.Tag.Identifier<(typeof requestServices)[number]>

/**
 * Builds the serving layer (`HttpApiBuilder.serve`) with only the services a request needs, from
 * the same layer memo (so the router and middleware are the API's). Every request fiber starts
 * with the context its server was built with, and each `provideService`, span and router match
 * copies that context: with the platform's ~60 services in it, that was ~6% of a read's CPU.
 */
export const withRequestServices = <E>(
  serve: Layer.Layer<never, E, RequestServices>
): Layer.Layer<never, E, RequestServices> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const keep = Context.pick(...requestServices)(yield* Effect.context<RequestServices>())
      const memoMap = yield* Layer.CurrentMemoMap
      const scope = yield* Effect.scope
      // Replaces the context rather than adding to it, as `Layer.provide` would.
      return yield* Effect.mapInputContext(
        Layer.buildWithMemoMap(serve, memoMap, scope),
        (_: Context.Context<RequestServices>) => keep
      )
    })
  )

/**
 * With Effect's tracer off, the platform's per-request tracing middleware still parses the URL,
 * copies the headers to redact them and makes a no-op span; this skips it. Only for servers whose
 * tracer is off, so a host's tracer still sees every request's span.
 */
export const withoutRequestTracing = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  HttpMiddleware.withTracerDisabledWhen(layer, () => true)
