import { RateLimiter } from "@effect/experimental"
import { Duration, Effect, Layer, Redacted } from "effect"
import type { Redis as RedisClient } from "ioredis"

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

// The scripts of @effect/experimental's Redis store: the same arithmetic as the memory store above.
const fixedWindowScript = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refillms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key))
if not current then
  local nextpttl = refillms * tokens
  redis.call("SET", key, tokens, "PX", nextpttl)
  return { tokens, nextpttl }
end
local currentpttl = tonumber(redis.call("PTTL", key) or "0")
local next = current + tokens
if limit and next > limit then
  return { next, currentpttl }
end
local nextpttl = currentpttl + (refillms * tokens)
redis.call("SET", key, next, "PX", nextpttl)
return { next, nextpttl }
`

const tokenBucketScript = `
local key = KEYS[1]
local last_refill_key = key .. ":refill"
local tokens = tonumber(ARGV[1])
local refill_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local overflow = ARGV[5] == "1"
local current = tonumber(redis.call("GET", key))
local last_refill = tonumber(redis.call("GET", last_refill_key))
if not current then
  current = limit
  last_refill = now
  redis.call("SET", key, current)
  redis.call("SET", last_refill_key, last_refill)
end
local elapsed = now - last_refill
local refill_amount = math.floor(elapsed / refill_ms)
if refill_amount > 0 then
  current = math.min(current + refill_amount, limit)
  last_refill = last_refill + (refill_amount * refill_ms)
  redis.call("SET", last_refill_key, last_refill)
end
local next = current - tokens
if next < 0 and not overflow then
  redis.call("SET", key, current)
  return next
end
redis.call("SET", key, next)
return next
`

/**
 * A Redis client of our own, closed with the scope, with `scripts` defined on it: its connection
 * errors go to a listener (the callers' fallbacks report an outage once) instead of ioredis'
 * console output, and a command fails fast while Redis is unreachable.
 */
export const connectRedis = <Client>(
  url: Redacted.Redacted,
  scripts: Record<string, { readonly lua: string; readonly numberOfKeys: number }>
) =>
  Effect.gen(function*() {
    const u = new URL(Redacted.value(url))
    // Loaded when Redis is configured, not at every start.
    const { Redis } = yield* Effect.promise(() => import("ioredis"))
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = new Redis({
          host: u.hostname,
          port: Number(u.port || 6379),
          ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
          ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
          db: Number(u.pathname.slice(1) || 0),
          ...(u.protocol === "rediss:" ? { tls: {} } : {}),
          // A command fails after one reconnect attempt during an outage, and after 250 ms at
          // most, so a slow or absent Redis cannot stall requests.
          maxRetriesPerRequest: 1,
          commandTimeout: 250,
          scripts
        })
        client.on("error", () => {})
        return client as RedisClient & Client
      }),
      // QUIT fails while Redis is unreachable; that must not fail shutdown.
      (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
    )
  })

/** Counts in Redis, shared by every replica. */
export const makeRedisStore = (url: Redacted.Redacted, prefix: string) =>
  Effect.gen(function*() {
    const redis = yield* connectRedis<{
      fixedWindow: (
        key: string,
        tokens: number,
        refillMs: number,
        limit: number | undefined
      ) => Promise<[number, number]>
      tokenBucket: (
        key: string,
        tokens: number,
        refillMs: number,
        limit: number,
        now: number,
        overflow: 0 | 1
      ) => Promise<number>
    }>(url, {
      fixedWindow: { lua: fixedWindowScript, numberOfKeys: 1 },
      tokenBucket: { lua: tokenBucketScript, numberOfKeys: 1 }
    })
    const failed = (cause: unknown) =>
      new RateLimiter.RateLimitStoreError({ message: "Redis rate-limit command failed", cause })
    return RateLimiter.RateLimiterStore.of({
      fixedWindow: (options) =>
        Effect.tryPromise({
          try: () =>
            redis.fixedWindow(
              `${prefix}${options.key}`,
              options.tokens,
              Duration.toMillis(options.refillRate),
              options.limit
            ),
          catch: failed
        }),
      tokenBucket: (options) =>
        Effect.clockWith((clock) =>
          Effect.tryPromise({
            try: () =>
              redis.tokenBucket(
                `${prefix}${options.key}`,
                options.tokens,
                Duration.toMillis(options.refillRate),
                options.limit,
                clock.unsafeCurrentTimeMillis(),
                options.allowOverflow ? 1 : 0
              ),
            catch: failed
          })
        )
    })
  })

/** While the shared store is down, one request in this interval tries it again; the others count locally. */
export const probeInterval = Duration.seconds(5)

/**
 * A shared store (Redis) with this process's memory behind it: `use(onShared, onLocal)` runs
 * `onShared` while the store answers; when it fails, `onLocal` with one warning, trying the store
 * again once per `probeInterval` and going back to it, with one notice, as soon as it answers.
 * `store` and `counted` name them in the log ("Rate-limit store", "limits").
 */
export const sharedWhileUp = (store: string, counted: string) =>
  Effect.map(Effect.clock, (clock) => {
    let downSince: number | undefined
    let lastTry = 0
    return <A, E1, E2>(onShared: Effect.Effect<A, E1>, onLocal: Effect.Effect<A, E2>): Effect.Effect<A, E2> =>
      Effect.suspend(() => {
        const now = clock.unsafeCurrentTimeMillis()
        if (downSince !== undefined && now - lastTry < Duration.toMillis(probeInterval)) return onLocal
        lastTry = now
        return onShared.pipe(
          Effect.tap(() => {
            if (downSince === undefined) return Effect.void
            downSince = undefined
            return Effect.logInfo(`${store} is back: ${counted} are counted across replicas again`)
          }),
          Effect.catchAll((e) => {
            const first = downSince === undefined
            if (first) downSince = now
            const failure = e as { readonly message?: string; readonly cause?: { readonly message?: string } }
            const warn = first
              ? Effect.logWarning(
                `${store} unreachable (${
                  String(failure.cause?.message ?? failure.message)
                }); ${counted} are counted per process until it is back`
              )
              : Effect.void
            return Effect.zipRight(warn, onLocal)
          })
        )
      })
  })

/** The rate limiter's store: `primary` while it answers, else `fallback`, this process's counts (see `sharedWhileUp`). */
export const withFallback = (
  primary: RateLimiter.RateLimiterStore["Type"],
  fallback: RateLimiter.RateLimiterStore["Type"]
) =>
  Effect.gen(function*() {
    const use = yield* sharedWhileUp("Rate-limit store", "limits")
    return RateLimiter.RateLimiterStore.of({
      fixedWindow: (options) => use(primary.fixedWindow(options), fallback.fixedWindow(options)),
      tokenBucket: (options) => use(primary.tokenBucket(options), fallback.tokenBucket(options))
    })
  })

/** Redis, falling back to this process's memory while Redis is unreachable. */
export const layerRedis = (url: Redacted.Redacted, prefix = "trading-platform:ratelimit:") =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      const redis = yield* makeRedisStore(url, prefix)
      const memory = yield* makeMemoryStore
      return yield* withFallback(redis, memory.store)
    })
  )
