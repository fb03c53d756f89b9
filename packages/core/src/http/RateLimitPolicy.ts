import { Schema } from "effect"

/** What a request is counted as; each category has its own quota. */
export const RateLimitCategory = Schema.Literal("auth", "read", "write")
export type RateLimitCategory = typeof RateLimitCategory.Type

export const Quota = Schema.Struct({
  limit: Schema.Int.pipe(Schema.positive()),
  window_ms: Schema.Int.pipe(Schema.positive())
})
export type Quota = typeof Quota.Type

/**
 * Failed logins of one account (whatever the IP): after `allowed` of them, each further failure
 * makes the account wait `first_delay_ms`, doubled per failure up to `max_delay_ms`; a success, or
 * `forget_ms` past the wait without a failure, starts again from none.
 */
export const LoginFailurePolicy = Schema.Struct({
  allowed: Schema.Int.pipe(Schema.positive()),
  first_delay_ms: Schema.Int.pipe(Schema.positive()),
  max_delay_ms: Schema.Int.pipe(Schema.positive()),
  forget_ms: Schema.Int.pipe(Schema.positive())
})
export type LoginFailurePolicy = typeof LoginFailurePolicy.Type

/**
 * The rate-limit policy as data (`docs/limits.md`). `auth` is counted per IP; `read` and `write` per
 * token and per IP, and the more restrictive answers. Streams and WebSocket messages are limited
 * by their own endpoints; failed logins per account by `login_failures`.
 */
export const RateLimitPolicy = Schema.Struct({
  auth: Quota,
  read: Quota,
  write: Quota,
  concurrent_streams: Schema.Int.pipe(Schema.positive()),
  websocket_messages_per_min: Schema.Int.pipe(Schema.positive()),
  login_failures: LoginFailurePolicy
})
export type RateLimitPolicy = typeof RateLimitPolicy.Type

const perMinute = (limit: number): Quota => ({ limit, window_ms: 60_000 })

export const defaultRateLimitPolicy: RateLimitPolicy = {
  auth: perMinute(10),
  read: perMinute(120),
  write: perMinute(60),
  concurrent_streams: 1,
  websocket_messages_per_min: 240,
  login_failures: { allowed: 5, first_delay_ms: 1_000, max_delay_ms: 900_000, forget_ms: 3_600_000 }
}

/** Builds the policy from per-minute limits (the configuration's shape). */
export const rateLimitPolicyPerMinute = (limits: { auth: number; read: number; write: number }): RateLimitPolicy => ({
  ...defaultRateLimitPolicy,
  auth: perMinute(limits.auth),
  read: perMinute(limits.read),
  write: perMinute(limits.write)
})

/** The operations counted as `auth`, by the contract's group and endpoint names. */
export const authEndpoints: ReadonlyArray<{ readonly group: string; readonly endpoint: string }> = [
  { group: "users", endpoint: "login" },
  { group: "users", endpoint: "register" }
]

/**
 * The category of a request, from its method and the operation the router matched for it (none for
 * an unknown route), so every spelling of a path the router accepts counts the same.
 */
export const rateLimitCategory = (
  method: string,
  operation: { readonly group: string; readonly endpoint: string } | undefined
): RateLimitCategory =>
  operation !== undefined && authEndpoints.some((a) => a.group === operation.group && a.endpoint === operation.endpoint)
    ? "auth"
    : method === "GET" || method === "HEAD" || method === "OPTIONS"
    ? "read"
    : "write"
