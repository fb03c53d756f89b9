import { describe, expect, layer } from "@effect/vitest"
import { DatabaseLive } from "@trading-platform/core"
import { Duration, Effect, Layer, TestClock } from "effect"
import { claimRound } from "../../src/jobs/PeriodicTask.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`periodic task rounds over ${storage.name}`, () => {
    layer(DatabaseLive.pipe(Layer.provide(TestConfig(storage))), { timeout: "120 seconds" })((it) => {
      it.effect("of many instances claiming a round at once, exactly one wins; the next round opens after the interval", () =>
        Effect.gen(function*() {
          const every = Duration.hours(1)
          const claimAll = Effect.all(Array.from({ length: 8 }, () => claimRound("test-task", every)), {
            concurrency: "unbounded"
          })
          expect((yield* claimAll).filter(Boolean)).toHaveLength(1)
          yield* TestClock.adjust("59 minutes")
          expect((yield* claimAll).filter(Boolean)).toHaveLength(0)
          yield* TestClock.adjust("1 minute")
          expect((yield* claimAll).filter(Boolean)).toHaveLength(1)
          // Another task has rounds of its own.
          expect(yield* claimRound("other-task", every)).toBe(true)
        }))
    })
  })
}
