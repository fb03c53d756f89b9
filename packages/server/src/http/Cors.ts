import { HttpApiBuilder } from "@effect/platform"
import { Config, Effect, Layer } from "effect"

const isOrigin = (s: string) => URL.canParse(s) && new URL(s).origin === s

/** `CORS_ORIGINS`: the origins whose browser pages may call the API, comma-separated; none by default. */
export const corsOriginsConfig: Config.Config<ReadonlyArray<string>> = Config.string("CORS_ORIGINS").pipe(
  Config.withDefault(""),
  Config.map((s) => s.split(",").map((o) => o.trim()).filter((o) => o !== "")),
  Config.validate({
    message: "must be origins such as https://app.example.com (scheme, host and port; no path), comma-separated",
    validation: (origins) => origins.every(isOrigin)
  })
)

/**
 * CORS for the origins of `CORS_ORIGINS`: a preflight is answered (204) and answers carry
 * `Access-Control-Allow-Origin` for a listed origin only. Unset, no CORS header is ever sent.
 */
export const CorsLive = Layer.unwrapEffect(
  Effect.map(corsOriginsConfig, (origins) =>
    origins.length === 0 ? Layer.empty : HttpApiBuilder.middlewareCors({
      // A predicate, so a single listed origin is checked too rather than sent to everyone.
      allowedOrigins: (origin) => origins.includes(origin),
      exposedHeaders: [
        "x-request-id",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "retry-after"
      ],
      maxAge: 600
    }))
)
