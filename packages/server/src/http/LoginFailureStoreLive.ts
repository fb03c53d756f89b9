import {
  type LoginFailurePolicy,
  LoginFailureStore,
  makeMemoryLoginFailureStore,
  PlatformConfig
} from "@trading-platform/core"
import { Effect, Layer, Option, type Redacted } from "effect"
import { connectRedis, sharedWhileUp } from "./RateLimitStore.js"

// KEYS: the account's failure count, its wait. The wait is a key that expires with it, so no
// replica's clock is read: Redis times it. Same arithmetic as core's `loginDelay`.
const failScript = `
local failures = redis.call("INCR", KEYS[1])
local allowed = tonumber(ARGV[1])
local wait = 0
if failures >= allowed then
  wait = math.floor(math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * 2 ^ math.min(failures - allowed, 40)))
  redis.call("SET", KEYS[2], "1", "PX", wait)
end
redis.call("PEXPIRE", KEYS[1], wait + tonumber(ARGV[4]))
return wait
`

interface Scripts {
  loginFail: (
    countKey: string,
    waitKey: string,
    allowed: number,
    firstDelayMs: number,
    maxDelayMs: number,
    forgetMs: number
  ) => Promise<number>
}

/** Failed logins counted in Redis, shared by every replica. */
const makeRedisLoginFailureStore = (url: Redacted.Redacted, prefix: string) =>
  Effect.gen(function*() {
    const redis = yield* connectRedis<Scripts>(url, { loginFail: { lua: failScript, numberOfKeys: 2 } })
    const count = (key: string) => `${prefix}${key}:failures`
    const wait = (key: string) => `${prefix}${key}:wait`
    return {
      waitFor: (key: string) =>
        Effect.tryPromise(() => redis.pttl(wait(key))).pipe(Effect.map((ms) => Math.max(0, ms))),
      fail: (key: string, policy: LoginFailurePolicy) =>
        Effect.tryPromise(() =>
          redis.loginFail(
            count(key),
            wait(key),
            policy.allowed,
            policy.first_delay_ms,
            policy.max_delay_ms,
            policy.forget_ms
          )
        ),
      clear: (key: string) => Effect.tryPromise(() => redis.del(count(key), wait(key))).pipe(Effect.asVoid)
    }
  })

/**
 * Redis while it answers; while it does not, this process's memory (one warning), trying Redis
 * again now and then, as the rate limits do (`sharedWhileUp`).
 */
const layerRedis = (url: Redacted.Redacted, prefix = "trading-platform:login:") =>
  Layer.scoped(
    LoginFailureStore,
    Effect.gen(function*() {
      const redis = yield* makeRedisLoginFailureStore(url, prefix)
      const memory = yield* makeMemoryLoginFailureStore
      const use = yield* sharedWhileUp("Login failure store", "failed logins")
      return LoginFailureStore.of({
        waitFor: (key) => use(redis.waitFor(key), memory.waitFor(key)),
        fail: (key, policy) => use(redis.fail(key, policy), memory.fail(key, policy)),
        clear: (key) => use(redis.clear(key), memory.clear(key))
      })
    })
  )

/**
 * Failed logins on Redis when `REDIS_URL` is set, shared by replicas as the rate limits are;
 * without it, nothing here: the users service counts in its own memory.
 */
export const LoginFailureStoreLive: Layer.Layer<never, never, PlatformConfig> = Layer.unwrapEffect(
  Effect.map(
    PlatformConfig,
    ({ redisUrl }) =>
      Option.match(redisUrl, { onNone: (): Layer.Layer<never> => Layer.empty, onSome: (url) => layerRedis(url) })
  )
)
