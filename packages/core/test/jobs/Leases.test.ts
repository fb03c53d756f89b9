import { describe, expect, layer } from "@effect/vitest"
import { DatabaseLive, Leases } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const holders = Array.from({ length: 8 }, (_, i) => `holder-${i}`)

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`leases over ${storage.name}`, () => {
    layer(Leases.Default.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(TestConfig(storage))), {
      timeout: "120 seconds"
    })((it) => {
      it.effect("of many instances claiming a round at once, exactly one wins; the next round opens after the interval", () =>
        Effect.gen(function*() {
          const leases = yield* Leases
          const every = Duration.hours(1)
          const claimAll = Effect.all(holders.map((h) => leases.claimRound("test-task", h, every)), {
            concurrency: "unbounded"
          })
          expect((yield* claimAll).filter(Boolean)).toHaveLength(1)
          yield* TestClock.adjust("59 minutes")
          expect((yield* claimAll).filter(Boolean)).toHaveLength(0)
          yield* TestClock.adjust("1 minute")
          expect((yield* claimAll).filter(Boolean)).toHaveLength(1)
          // Another task has rounds of its own.
          expect(yield* leases.claimRound("other-task", "holder-0", every)).toBe(true)
        }))

      it.effect("a lease is one holder's until it runs out or is released; the holder renews it", () =>
        Effect.gen(function*() {
          const leases = yield* Leases
          const lease = Duration.minutes(1)
          const acquireAll = Effect.all(holders.map((h) => leases.acquire("test-lease", h, lease)), {
            concurrency: "unbounded"
          })
          expect((yield* acquireAll).filter(Boolean)).toHaveLength(1)
          const first = Option.getOrThrow(yield* leases.find("test-lease")).holder
          yield* TestClock.adjust("30 seconds")
          // The holder renews; nobody else gets it, even after the first minute.
          expect(yield* leases.acquire("test-lease", first, lease)).toBe(true)
          yield* TestClock.adjust("45 seconds")
          expect((yield* acquireAll).filter(Boolean)).toEqual([true])
          expect(yield* leases.holds("test-lease", first)).toBe(true)
          // Released, it goes to the next claimant at once.
          yield* leases.release("test-lease", first)
          expect(yield* leases.holds("test-lease", first)).toBe(false)
          const other = holders.find((h) => h !== first)!
          expect(yield* leases.acquire("test-lease", other, lease)).toBe(true)
          expect(yield* leases.acquire("test-lease", first, lease)).toBe(false)
          // Run out, it goes to anyone.
          yield* TestClock.adjust("1 minute")
          expect(yield* leases.acquire("test-lease", first, lease)).toBe(true)
        }))
    })
  })
}
