import { describe, expect, layer } from "@effect/vitest"
import { BackgroundStart, DatabaseLive, Leases } from "@trading-platform/core"
import { Deferred, Duration, Effect, Layer, Option, Queue, TestClock } from "effect"
import { leasedLoop } from "../../src/jobs/Leases.js"
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

      it.effect("a loop's first pass waits for BackgroundStart, and runs at once when nothing holds it", () =>
        Effect.gen(function*() {
          const loop = (name: string, ran: Deferred.Deferred<void>) =>
            leasedLoop(
              name,
              { interval: Duration.minutes(1), lease: Duration.minutes(1) },
              Deferred.succeed(ran, undefined)
            )
          const asked = yield* Deferred.make<void>()
          const open = yield* Deferred.make<void>()
          const held = yield* Deferred.make<void>()
          yield* loop("held-loop", held).pipe(
            Effect.provideService(
              BackgroundStart,
              Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(open))
            )
          )
          yield* Deferred.await(asked)
          // Neither time on the Clock nor on the wall runs the pass while the start is held.
          yield* TestClock.adjust("10 minutes")
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
          expect(yield* Deferred.isDone(held)).toBe(false)
          expect(yield* (yield* Leases).find("held-loop")).toEqual(Option.none())
          yield* Deferred.succeed(open, undefined)
          yield* Deferred.await(held)

          const free = yield* Deferred.make<void>()
          yield* loop("free-loop", free)
          yield* Deferred.await(free)
        }).pipe(Effect.scoped))

      it.effect("a loop keeps its rate: a clock moved while a pass runs does not push the next one back", () =>
        Effect.gen(function*() {
          const started = yield* Queue.unbounded<number>()
          const gate = yield* Deferred.make<void>()
          yield* leasedLoop(
            "paced-loop",
            { interval: Duration.hours(1), lease: Duration.hours(1) },
            Effect.zipRight(
              Effect.flatMap(TestClock.currentTimeMillis, (at) => Queue.offer(started, at)),
              Deferred.await(gate)
            )
          )
          const first = yield* Queue.take(started)
          // The hour passes while the first pass still runs: the next is due as it ends, not an hour later.
          yield* TestClock.adjust("1 hour")
          yield* Deferred.succeed(gate, undefined)
          const wallDeadline = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5_000)))
          const second = yield* Effect.raceFirst(
            Effect.asSome(Queue.take(started)),
            Effect.as(wallDeadline, Option.none())
          )
          expect(second).toEqual(Option.some(first + Duration.toMillis("1 hour")))
        }).pipe(Effect.scoped))
    })
  })
}
