import { Effect, Layer, PubSub, Stream } from "effect"
import { type SignalEngineShape, SignalEngine } from "./SignalEngine.js"
import type { Trigger } from "./Signal.js"

/** The engine of this instance; the rounds come in the next commits. */
export const SignalEngineLive = Layer.scoped(
  SignalEngine,
  Effect.gen(function*() {
    const events = yield* Effect.acquireRelease(PubSub.unbounded<Trigger>(), PubSub.shutdown)
    return {
      triggers: Stream.fromPubSub(events),
      subscribe: PubSub.subscribe(events),
      evaluateNow: Effect.succeed([]),
      samples: () => Effect.succeed([]),
      start: Effect.void,
      stop: Effect.void
    } satisfies SignalEngineShape
  })
)
