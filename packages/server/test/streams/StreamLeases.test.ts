import { describe, expect, it } from "@effect/vitest"
import { PlatformConfig, platformOptions, Unauthorized, Users } from "@trading-platform/core"
import { StreamLeases } from "@trading-platform/server"
import { Effect, Exit, Fiber, Layer, Option, Scope, TestClock } from "effect"

// What the token's check answers at the lease's next renewal.
let answer: "valid" | "storage down" | "revoked" = "valid"
let checks = 0

/** Users whose `authenticateAll` answers as told: the only method the leases call. */
const ScriptedUsers = Layer.succeed(
  Users,
  Users.make(
    {
      authenticateAll: (tokens: ReadonlyArray<string>) =>
        Effect.suspend(() => {
          checks++
          return answer === "valid"
            ? Effect.succeed(new Map())
            : answer === "storage down"
            ? Effect.die(new Error("the database is unreachable"))
            : Effect.succeed(
              new Map(tokens.map((token) => [
                token,
                new Unauthorized({ error: "The session token was revoked; log in again", reason: "token_revoked" })
              ]))
            )
        })
    } as unknown as Parameters<typeof Users.make>[0]
  )
)

describe("StreamLeases", () => {
  it.scoped("a lease ends once its token stops authenticating; storage that cannot answer ends nothing", () =>
    Effect.gen(function*() {
      const leases = yield* StreamLeases
      const lease = yield* leases.acquire("a token")
      const ended = yield* Effect.fork(lease.ended)
      answer = "storage down"
      yield* TestClock.adjust("5 seconds")
      answer = "valid"
      yield* TestClock.adjust("5 seconds")
      expect(checks).toBe(2)
      expect(Option.isNone(yield* Fiber.poll(ended))).toBe(true)
      answer = "revoked"
      yield* TestClock.adjust("5 seconds")
      expect((yield* Fiber.join(ended)).reason).toBe("token_revoked")
    }).pipe(Effect.provide(StreamLeases.Default.pipe(
      Layer.provide(ScriptedUsers),
      Layer.provide(PlatformConfig.layer(platformOptions()))
    ))))

  it.scoped("release lets the lease go before its scope ends, and a second release frees nothing more", () =>
    Effect.gen(function*() {
      const leases = yield* StreamLeases
      const scope = yield* Scope.make()
      const first = yield* Scope.extend(leases.acquire("one token"), scope)
      expect((yield* Effect.flip(leases.acquire("one token")))._tag).toBe("RateLimited")
      yield* first.release
      yield* leases.acquire("one token")
      // Already released: neither again nor the end of its scope frees the lease the second one holds.
      yield* first.release
      yield* Scope.close(scope, Exit.void)
      expect((yield* Effect.flip(leases.acquire("one token")))._tag).toBe("RateLimited")
    }).pipe(Effect.provide(StreamLeases.Default.pipe(
      Layer.provide(ScriptedUsers),
      Layer.provide(PlatformConfig.layer(platformOptions()))
    ))))
})
