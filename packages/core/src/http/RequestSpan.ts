import { Effect, FiberRef, type Tracer } from "effect"

/**
 * `Effect.withSpan` for the platform's service methods and what every request runs: the span is
 * made only while the tracer is on. With it off, `withSpan` still captures a stack trace, makes a
 * no-op span, adds it to the context and ends it in an uninterruptible finaliser, about 10 µs a
 * call (docs/performance.md); a host's tracer, when on, sees every span as before.
 */
export const withRequestSpan =
  (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(
      FiberRef.get(FiberRef.currentTracerEnabled),
      (tracing) => tracing ? Effect.withSpan(self, name, options) : self
    )
