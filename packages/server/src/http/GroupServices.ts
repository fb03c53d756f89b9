import { Context, Effect, Layer } from "effect"

/**
 * Builds an `HttpApiBuilder.group` layer with only the services in `tags`, from the same layer
 * memo. A group merges the context it was built with into every request of its handlers, and
 * each later `provideService` and span copies it: with the platform's ~85 services that was
 * 2–4% of every route's CPU (docs/performance.md). The compiler refuses a list that leaves out
 * anything the layer requires, so a handler cannot lose a service it reads per request.
 */
export const withOnlyServices =
  <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
  <A, E, R extends Context.Tag.Identifier<Tags[number]>>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    Layer.scopedContext(
      Effect.gen(function*() {
        const keep = Context.pick(...tags)(yield* Effect.context<R>()) as Context.Context<R>
        const memoMap = yield* Layer.CurrentMemoMap
        const scope = yield* Effect.scope
        // Replaces the context rather than adding to it, as `Layer.provide` would.
        return yield* Effect.mapInputContext(
          Layer.buildWithMemoMap(layer, memoMap, scope),
          (_: Context.Context<R>) => keep
        )
      })
    )
