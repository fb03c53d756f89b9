import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CurrentUser, OptimizationRobustness, Optimizations, TradingApi } from "@trading-platform/core"
import { Effect, Stream } from "effect"

export const OptimizationsHttpLive = HttpApiBuilder.group(
  TradingApi,
  "optimizations",
  (handlers) =>
    Effect.gen(function*() {
      const optimizations = yield* Optimizations
      const robustness = yield* OptimizationRobustness
      return handlers
        .handle(
          "submit",
          ({ path, payload }) => Effect.flatMap(CurrentUser, (caller) => optimizations.submit(caller, path.id, payload))
        )
        .handle(
          "list",
          ({ path, urlParams }) =>
            Effect.flatMap(CurrentUser, (caller) => optimizations.list(caller, path.id, urlParams))
        )
        .handle(
          "get",
          ({ path }) =>
            Effect.flatMap(CurrentUser, (caller) => optimizations.get(caller, path.id, path.optimization_id))
        )
        .handle(
          "trials",
          ({ path, urlParams }) =>
            Effect.flatMap(
              CurrentUser,
              (caller) => optimizations.trials(caller, path.id, path.optimization_id, urlParams)
            )
        )
        .handle(
          "cancel",
          ({ path }) =>
            Effect.flatMap(CurrentUser, (caller) => optimizations.cancel(caller, path.id, path.optimization_id))
        )
        .handle(
          "remove",
          ({ path }) =>
            Effect.flatMap(CurrentUser, (caller) => optimizations.remove(caller, path.id, path.optimization_id))
        )
        .handle(
          "robustness",
          ({ path, payload }) =>
            Effect.flatMap(
              CurrentUser,
              (caller) => robustness.report(caller, path.id, path.optimization_id, payload)
            )
        )
        .handleRaw("stream", ({ path }) =>
          Effect.gen(function*() {
            const caller = yield* CurrentUser
            // Ownership and the program are checked before the stream opens, so they answer the envelope.
            const progress = yield* optimizations.watch(caller, path.optimization_id, path.id)
            const frames = progress.pipe(
              Stream.map((data) => `event: progress\ndata: ${JSON.stringify(data)}\n\n`),
              // A failure after the first event can only end the stream.
              Stream.catchAll(() => Stream.empty),
              Stream.encodeText
            )
            return HttpServerResponse.stream(frames, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
            })
          }))
    })
)
