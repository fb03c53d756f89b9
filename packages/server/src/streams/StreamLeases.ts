import { PlatformConfig, RateLimited, type Unauthorized, Users, withRequestSpan } from "@trading-platform/core"
import { Duration, Effect, FiberHandle, Option, Redacted, Runtime, Schedule, type Scope } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { onClientGone } from "./ClientGone.js"

/** A lease not renewed for this long is gone, so the streams of a process that died free up. */
export const leaseTtl = Duration.seconds(15)
const renewEvery = Duration.seconds(5)
/** What a refused caller is told to wait: a closed stream frees its lease at once, a dead holder's within `leaseTtl`. */
const retryAfterSeconds = Duration.toSeconds(renewEvery)

const keyOf = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 32)

/** Where the open leases are counted: this process, or Redis for every replica. */
interface LeaseStore {
  /** Takes a lease on `key` unless `limit` are held; false when refused. */
  readonly take: (key: string, id: string, limit: number) => Effect.Effect<boolean>
  /** Renews every lease of this process at once (one round trip). */
  readonly renew: (leases: ReadonlyArray<{ readonly key: string; readonly id: string }>) => Effect.Effect<void>
  readonly release: (key: string, id: string) => Effect.Effect<void>
}

const memoryStore = (): LeaseStore => {
  const held = new Map<string, number>()
  return {
    take: (key, _id, limit) =>
      Effect.sync(() => {
        const count = held.get(key) ?? 0
        if (count >= limit) return false
        held.set(key, count + 1)
        return true
      }),
    renew: () => Effect.void,
    release: (key) =>
      Effect.sync(() => {
        const count = (held.get(key) ?? 1) - 1
        if (count <= 0) held.delete(key)
        else held.set(key, count)
      })
  }
}

// A sorted set per token: members are lease ids scored by their expiry (Redis' own clock, so
// replicas' clocks do not matter); expired members are dropped before counting.
const takeScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`
const renewScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`

/**
 * Leases in Redis, shared by every replica. While Redis is unreachable a command fails fast and
 * the stream is allowed (like the rate limiter, failing open rather than refusing every stream).
 */
const redisStore = (url: Redacted.Redacted, prefix: string) =>
  Effect.gen(function*() {
    // Loaded when Redis is configured, not at every start.
    const { Redis } = yield* Effect.promise(() => import("ioredis"))
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(Redacted.value(url), { maxRetriesPerRequest: 1, commandTimeout: 250, lazyConnect: true })
      ),
      (client) => Effect.sync(() => client.disconnect())
    )
    const ttlMs = String(Duration.toMillis(leaseTtl))
    const run = <A>(what: string, command: () => Promise<A>, fallback: A) =>
      Effect.tryPromise(command).pipe(
        Effect.catchAll((e) => Effect.as(Effect.logWarning(`stream lease store unavailable (${what})`, e), fallback))
      )
    return {
      take: (key, id, limit) =>
        run("take", () => redis.eval(takeScript, 1, prefix + key, id, String(limit), ttlMs), 1).pipe(
          Effect.map((r) => r === 1)
        ),
      renew: (leases) =>
        Effect.asVoid(run("renew", () => {
          const batch = redis.pipeline()
          for (const { id, key } of leases) batch.eval(renewScript, 1, prefix + key, id, ttlMs)
          return batch.exec()
        }, null)),
      release: (key, id) => Effect.asVoid(run("release", () => redis.zrem(prefix + key, id), 0))
    } satisfies LeaseStore
  })

/** An open stream's hold on its session token. */
export interface StreamLease {
  /**
   * Succeeds, with the reason, once the token no longer authenticates (logged out, revoked by a
   * password change or from the sessions list, expired, its user deleted): the stream ends then.
   */
  readonly ended: Effect.Effect<Unauthorized>
  /** Calls `f` (once) when the token no longer authenticates, as `ended` succeeds. */
  readonly onEnded: (f: (reason: Unauthorized) => void) => void
  /** Lets the lease go now (the end of its scope does too; only the first release counts). */
  readonly release: Effect.Effect<void>
}

/**
 * DESIGN §5 "streams: 1 concurrent per token": every long-lived stream (the market-intelligence
 * SSE, the WebSocket, the assistant's chat) holds a lease on its session token for as long as it
 * is open. Counted in Redis when `REDIS_URL` is set, so the limit holds across replicas; a lease
 * is renewed while its stream lives and expires `leaseTtl` after its process died. Each renewal
 * also authenticates the token again, so a stream outlives its token by at most `renewEvery`.
 * A lease taken while serving a request is let go as soon as that request's client goes away
 * (`onClientGone`), not when the stream's fiber has wound down: a client that closed its stream
 * and opens another at once is not refused.
 */
export class StreamLeases extends Effect.Service<StreamLeases>()("@trading-platform/server/StreamLeases", {
  scoped: Effect.gen(function*() {
    const { rateLimits, redisUrl } = yield* PlatformConfig
    const users = yield* Users
    const store = Option.isSome(redisUrl)
      ? yield* redisStore(redisUrl.value, "trading-platform:stream-lease:")
      : memoryStore()
    const limit = rateLimits.concurrent_streams

    // Started in the event that tells a client left: the store hears of it before the client's next request.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())

    /** The leases this process holds, each with whoever waits for its token to stop authenticating. */
    interface Held {
      readonly token: string
      readonly key: string
      readonly id: string
      reason: Unauthorized | undefined
      readonly waiting: Set<(reason: Unauthorized) => void>
    }
    const held = new Set<Held>()

    /**
     * One pass for all of them, rather than a fiber and a timer per stream: renews them in the
     * store and authenticates their tokens again together (`Users.authenticateAll`); storage that cannot
     * answer ends no stream.
     */
    const pass = Effect.suspend(() => {
      const leases = Array.from(held)
      const tokens = new Set<string>()
      for (const lease of leases) if (lease.reason === undefined) tokens.add(lease.token)
      return Effect.zipRight(
        store.renew(leases),
        users.authenticateAll(Array.from(tokens)).pipe(
          Effect.map((refused) => {
            for (const lease of leases) {
              const reason = refused.get(lease.token)
              if (reason === undefined || lease.reason !== undefined) continue
              lease.reason = reason
              for (const f of lease.waiting) f(reason)
              lease.waiting.clear()
            }
          }),
          Effect.catchAllDefect((defect) => Effect.logWarning("Could not check open streams' session tokens", defect))
        )
      )
    })
    // Runs only while some lease is held, so an idle server has no timer for it.
    const renewing = yield* FiberHandle.make()
    const renewal = Effect.repeat(pass, Schedule.fixed(renewEvery)).pipe(Effect.delay(renewEvery))

    /** Holds a taken lease until it is released; the release also runs the moment the client goes away. */
    const hold = (token: string, key: string, id: string, release: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const lease: Held = { token, key, id, reason: undefined, waiting: new Set() }
        held.add(lease)
        yield* FiberHandle.run(renewing, renewal, { onlyIfMissing: true })
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            held.delete(lease)
            return held.size === 0 ? FiberHandle.clear(renewing) : Effect.void
          })
        )
        yield* onClientGone(() => runFork(release))
        const onEnded = (f: (reason: Unauthorized) => void) => {
          if (lease.reason !== undefined) f(lease.reason)
          else lease.waiting.add(f)
        }
        const ended = Effect.async<Unauthorized>((resume) => {
          const f = (reason: Unauthorized) => resume(Effect.succeed(reason))
          onEnded(f)
          return Effect.sync(() => lease.waiting.delete(f))
        })
        return { ended, onEnded, release } satisfies StreamLease
      })

    /**
     * Holds a lease on `token` until the scope closes or the client of the request being served
     * goes away; fails with `RateLimited` (429) while the token already has its streams open.
     */
    const acquire = (token: string): Effect.Effect<StreamLease, RateLimited, Scope.Scope> => {
      const key = keyOf(token)
      const id = randomBytes(8).toString("hex")
      let released = false
      const release = Effect.suspend(() => {
        if (released) return Effect.void
        released = true
        return store.release(key, id)
      })
      return Effect.acquireRelease(
        store.take(key, id, limit),
        (taken) => (taken ? release : Effect.void)
      ).pipe(
        Effect.flatMap((taken) =>
          taken
            ? hold(token, key, id, release)
            : Effect.fail(
              new RateLimited({
                error: `Only ${limit} concurrent stream${
                  limit === 1 ? "" : "s"
                } per session token; close the open one first`,
                retry_after: retryAfterSeconds
              })
            )
        ),
        withRequestSpan("StreamLeases.acquire")
      )
    }
    return { acquire } as const
  })
}) {}
