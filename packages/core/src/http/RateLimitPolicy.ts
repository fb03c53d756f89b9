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
 * The rate-limit policy as data (`docs/limits.md`). `auth` is counted per IP; `read` and `write` per
 * token and per IP, and the more restrictive answers. Streams and WebSocket messages are limited
 * by their own endpoints.
 */
export const RateLimitPolicy = Schema.Struct({
  auth: Quota,
  read: Quota,
  write: Quota,
  concurrent_streams: Schema.Int.pipe(Schema.positive()),
  websocket_messages_per_min: Schema.Int.pipe(Schema.positive())
})
export type RateLimitPolicy = typeof RateLimitPolicy.Type

const perMinute = (limit: number): Quota => ({ limit, window_ms: 60_000 })

export const defaultRateLimitPolicy: RateLimitPolicy = {
  auth: perMinute(10),
  read: perMinute(120),
  write: perMinute(60),
  concurrent_streams: 1,
  websocket_messages_per_min: 240
}

/** Builds the policy from per-minute limits (the configuration's shape). */
export const rateLimitPolicyPerMinute = (limits: { auth: number; read: number; write: number }): RateLimitPolicy => ({
  ...defaultRateLimitPolicy,
  auth: perMinute(limits.auth),
  read: perMinute(limits.read),
  write: perMinute(limits.write)
})

const authPaths = new Set(["/api/users/login", "/api/users/register"])

/** The category of a request, from its method and path (without the query string). */
export const rateLimitCategory = (method: string, path: string): RateLimitCategory =>
  authPaths.has(path) ? "auth" : method === "GET" || method === "HEAD" || method === "OPTIONS" ? "read" : "write"
