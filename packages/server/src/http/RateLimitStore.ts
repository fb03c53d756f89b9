import { RateLimiter } from "@effect/experimental"
import * as RateLimiterRedis from "@effect/experimental/RateLimiter/Redis"
import { Duration, Effect, Exit, Layer, Redacted, Scope } from "effect"

const sweepInterval = Duration.toMillis("1 minute")

/**
 * In-process rate-limit counts (the same arithmetic as @effect/experimental's memory store),
 * with idle keys evicted: at most once a minute, counters whose window has passed and buckets
 * that have refilled are dropped, so keying by IP does not grow memory without bound.
 */
export const makeMemoryStore = Effect.gen(function*() {
  const clock = yield* Effect.clock
  const windows = new Map<string, { count: number; expiresAt: number }>()
  const buckets = new Map<string, { tokens: number; lastRefill: number; fullAt: number }>()
  let lastSweep = clock.unsafeCurrentTimeMillis()

  const sweep = (now: number) => {
    if (now - lastSweep < sweepInterval) return
    lastSweep = now
    for (const [key, w] of windows) if (w.expiresAt <= now) windows.delete(key)
    for (const [key, b] of buckets) if (b.fullAt <= now) buckets.delete(key)
  }

  const store = RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        sweep(now)
        const refill = Duration.toMillis(options.refillRate)
        let w = windows.get(options.key)
        if (!w || w.expiresAt <= now) {
          w = { count: 0, expiresAt: now }
          windows.set(options.key, w)
        }
        if (options.limit !== undefined && w.count + options.tokens > options.limit) {
          return [w.count + options.tokens, w.expiresAt - now] as const
        }
        w.count += options.tokens
        w.expiresAt += refill * options.tokens
        return [w.count, w.expiresAt - now] as const
      }),
    tokenBucket: (options) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        sweep(now)
        const refill = Duration.toMillis(options.refillRate)
        let b = buckets.get(options.key)
        if (!b) {
          b = { tokens: options.limit, lastRefill: now, fullAt: now }
          buckets.set(options.key, b)
        } else {
          const added = Math.floor((now - b.lastRefill) / refill)
          if (added > 0) {
            b.tokens = Math.min(options.limit, b.tokens + added)
            b.lastRefill += added * refill
          }
        }
        const left = b.tokens - options.tokens
        if (options.allowOverflow || left >= 0) b.tokens = left
        b.fullAt = b.lastRefill + (options.limit - b.tokens) * refill
        return left
      })
  })
  return { store, size: () => windows.size + buckets.size }
})

export const layerMemory = Layer.effect(RateLimiter.RateLimiterStore, Effect.map(makeMemoryStore, (m) => m.store))

/**
 * Counts in Redis, shared by every replica. While Redis is unreachable commands fail quickly
 * and the limiter lets requests through rather than stalling or failing them.
 */
export const layerRedis = (url: Redacted.Redacted, prefix = "trading-platform:ratelimit:") => {
  const u = new URL(Redacted.value(url))
  const make = RateLimiterRedis.make({
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db: Number(u.pathname.slice(1) || 0),
    ...(u.protocol === "rediss:" ? { tls: {} } : {}),
    prefix,
    // A command waits for the connection, but fails after one reconnect attempt during an outage,
    // and after 250 ms at most, so a slow Redis cannot stall requests.
    maxRetriesPerRequest: 1,
    commandTimeout: 250
  })
  // The library's release sends QUIT, which fails while Redis is unreachable; that must not fail shutdown.
  return Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void).pipe(Effect.catchAllCause(() => Effect.void)))
      return yield* make.pipe(Scope.extend(scope))
    })
  )
}
