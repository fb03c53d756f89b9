import { RateLimiter } from "@effect/experimental"
import { HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { FindMyWay } from "@effect/platform/HttpLayerRouter"
import { PlatformConfig, type Quota, rateLimitCategory, RateLimited, withRequestSpan } from "@trading-platform/core"
import { Clock, Duration, Effect, Either, FiberRef, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { type PresentedToken, presentedToken, type TokenCarrier } from "./PresentedToken.js"
import * as RateLimitStore from "./RateLimitStore.js"
import { routes } from "./Routes.js"

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

// Redis' fixed-window script needs window/limit to be whole milliseconds; round the window up
// to the next multiple of the limit (at most limit-1 ms longer) so every configured limit works.
const windowFor = (quota: Quota) => Duration.millis(Math.ceil(quota.window_ms / quota.limit) * quota.limit)

const hashKey = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 32)

interface Operation {
  readonly group: string
  readonly endpoint: string
}

/**
 * The contract's operations on the matcher the API's router uses, with its settings, so a request
 * is classified by the route it will take: the router ignores a trailing slash, repeated slashes and
 * case, and decodes `%xx`, so `/API/users//%6cogin/` is the login, and is counted as one.
 */
const makeOperations = (config: Partial<FindMyWay.RouterConfig>) => {
  const router = FindMyWay.make<Operation>(config)
  for (const { endpoint, group, method, path } of routes) {
    router.on(method, path as FindMyWay.PathInput, { group, endpoint })
  }
  // As the router: a HEAD without a route of its own takes the GET's.
  return (method: string, url: string): Operation | undefined =>
    (router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined))?.handler
}

/** What counting reads of a request, from the platform's request or `node:http`'s. */
export interface CountedRequest extends TokenCarrier {
  readonly method: string
  readonly remoteAddress: string | undefined
  /** Its token, read once by the caller, which authenticates with it too. */
  readonly presented: PresentedToken
}

interface Outcome {
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly exceeded: boolean
}

/**
 * The rate limits (`docs/limits.md`): counts each request against its category's quota per IP and, when a token is
 * presented, per token; the more restrictive answers. Every answer carries the X-RateLimit-*
 * headers; a request over quota fails with `RateLimited` and `Retry-After`.
 */
export class RateLimits extends Effect.Service<RateLimits>()("@trading-platform/server/RateLimits", {
  effect: Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    const { rateLimits: policy, trustProxy } = yield* PlatformConfig
    const operationOf = makeOperations(yield* FiberRef.get(HttpRouter.currentRouterConfig))

    const consume = (key: string, quota: Quota) =>
      limiter.consume({
        key,
        limit: quota.limit,
        window: windowFor(quota),
        algorithm: "fixed-window",
        onExceeded: "fail"
      }).pipe(
        Effect.either,
        Effect.flatMap(Either.match({
          onRight: (r): Effect.Effect<Option.Option<Outcome>> =>
            Effect.succeedSome({
              limit: r.limit,
              remaining: r.remaining,
              resetMs: Duration.toMillis(r.resetAfter),
              exceeded: false
            }),
          onLeft: (e) =>
            e._tag === "RateLimiterError" && e.reason === "Exceeded"
              ? Effect.succeedSome({
                limit: e.limit,
                remaining: 0,
                resetMs: Duration.toMillis(e.retryAfter),
                exceeded: true
              })
              // The store failed (or timed out): let the request through rather than fail the API.
              : Effect.as(Effect.logWarning("rate-limit store unavailable; request not counted", e), Option.none())
        }))
      )

    /**
     * Counts one request and says what to answer with: the X-RateLimit-* headers (and
     * `Retry-After`), and the `RateLimited` error when over quota.
     */
    const count = (request: CountedRequest) =>
      Effect.gen(function*() {
        const category = rateLimitCategory(request.method, operationOf(request.method, request.url))
        const quota = policy[category]
        const ip = (trustProxy && request.headers["x-forwarded-for"]?.split(",")[0]?.trim()) ||
          (request.remoteAddress ?? "unknown")
        const keys = [`${category}:ip:${ip}`]
        const { presented } = request
        if (category !== "auth" && presented._tag === "Token") {
          keys.push(`${category}:token:${hashKey(presented.token)}`)
        }

        const outcomes = Option.all(yield* Effect.forEach(keys, (key) => consume(key, quota))).pipe(
          Option.getOrElse(() => [] as Array<Outcome>)
        )
        if (outcomes.length === 0) return { headers: {}, exceeded: Option.none<RateLimited>() }
        // The more restrictive: an exceeded count first (longest wait), else the fewest remaining.
        const worst = outcomes.reduce((a, b) =>
          a.exceeded !== b.exceeded ?
            (a.exceeded ? a : b)
            : a.exceeded ?
            (a.resetMs >= b.resetMs ? a : b)
            : a.remaining !== b.remaining ?
            (a.remaining < b.remaining ? a : b)
            : a.resetMs >= b.resetMs
            ? a
            : b
        )
        const now = yield* Clock.currentTimeMillis
        const headers: Record<string, string> = {
          "x-ratelimit-limit": String(worst.limit),
          "x-ratelimit-remaining": String(worst.remaining),
          "x-ratelimit-reset": String(Math.ceil((now + worst.resetMs) / 1000))
        }
        if (!worst.exceeded) return { headers, exceeded: Option.none<RateLimited>() }
        const wait = seconds(worst.resetMs)
        headers["retry-after"] = String(wait)
        return {
          headers,
          exceeded: Option.some(
            new RateLimited({ error: `Rate limit exceeded; retry in ${wait} s`, retry_after: wait })
          )
        }
      }).pipe(withRequestSpan("RateLimits.count", { captureStackTrace: false }))

    /** `count` for the platform's request: its headers go on the answer, and over quota it fails. */
    const check = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      count({
        method: request.method,
        url: request.url,
        headers: request.headers,
        remoteAddress: Option.getOrUndefined(request.remoteAddress),
        presented: presentedToken(request)
      })).pipe(
        Effect.tap(({ headers }) =>
          HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.setHeaders(response, headers))
          )
        ),
        Effect.flatMap(({ exceeded }) => Option.match(exceeded, { onNone: () => Effect.void, onSome: Effect.fail }))
      )

    return { check, count } as const
  })
}) {}

/** The limiter on Redis when `REDIS_URL` is set, else in process memory. */
export const RateLimiterLive = Layer.unwrapEffect(
  Effect.map(PlatformConfig, ({ redisUrl }) =>
    RateLimiter.layer.pipe(
      Layer.provide(Option.match(redisUrl, {
        onNone: () => RateLimitStore.layerMemory,
        onSome: (url) => RateLimitStore.layerRedis(url)
      }))
    ))
)
