import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"

/**
 * Marks the answer being made `Cache-Control: no-store`, success or error alike: what it carries
 * (a session token, an account) is kept by no cache, the browser's or a proxy's.
 */
export const noStore = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "no-store"))
)
