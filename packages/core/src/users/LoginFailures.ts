import { Context, Duration, Effect } from "effect"
import type { LoginFailurePolicy } from "../http/RateLimitPolicy.js"

/**
 * Where failed logins are counted, per account key (the e-mail in lower case), whatever the IP.
 * In process memory by default; the server puts it on Redis when `REDIS_URL` is set, so replicas
 * share the counts, as they share the rate limits.
 */
export class LoginFailureStore extends Context.Tag("@trading-platform/core/LoginFailureStore")<
  LoginFailureStore,
  {
    /** Milliseconds the account must still wait before a login is tried (0: none). */
    readonly waitFor: (key: string) => Effect.Effect<number>
    /** Counts one failure; answers the wait it starts (0 while within `allowed`). */
    readonly fail: (key: string, policy: LoginFailurePolicy) => Effect.Effect<number>
    /** Forgets the account's failures (after a successful login). */
    readonly clear: (key: string) => Effect.Effect<void>
  }
>() {}

/** The wait after the `failures`-th failure in a row: none within `allowed`, then doubling from the first delay. */
export const loginDelay = (failures: number, policy: LoginFailurePolicy) =>
  failures < policy.allowed
    ? 0
    : Math.min(policy.max_delay_ms, policy.first_delay_ms * 2 ** Math.min(failures - policy.allowed, 40))

const sweepInterval = Duration.toMillis("1 minute")

/** Counts in this process's memory (on the Effect clock), with accounts evicted once forgotten. */
export const makeMemoryLoginFailureStore = Effect.map(Effect.clock, (clock) => {
  const accounts = new Map<string, { failures: number; waitUntil: number; forgetAt: number }>()
  let lastSweep = clock.unsafeCurrentTimeMillis()
  const sweep = (now: number) => {
    if (now - lastSweep < sweepInterval) return
    lastSweep = now
    for (const [key, a] of accounts) if (a.forgetAt <= now) accounts.delete(key)
  }
  const current = (key: string, now: number) => {
    const a = accounts.get(key)
    return a !== undefined && a.forgetAt > now ? a : undefined
  }
  return LoginFailureStore.of({
    waitFor: (key) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        sweep(now)
        return Math.max(0, (current(key, now)?.waitUntil ?? 0) - now)
      }),
    fail: (key, policy) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        const failures = (current(key, now)?.failures ?? 0) + 1
        const wait = loginDelay(failures, policy)
        accounts.set(key, { failures, waitUntil: now + wait, forgetAt: now + wait + policy.forget_ms })
        return wait
      }),
    clear: (key) => Effect.sync(() => void accounts.delete(key))
  })
})
