import { HttpServerRequest } from "@effect/platform"
import { UnsupportedMediaType } from "@trading-platform/core"
import { Effect } from "effect"
import { routeOf } from "./Routes.js"

/** Whether the request's body streams into its handler, which caps it, rather than being read whole. */
export const isStreamedBody = (request: HttpServerRequest.HttpServerRequest) =>
  routeOf(request)?.route.body === "streamed"

// application/json with or without parameters (charset); no header at all is read as JSON, as HttpApi does.
const isJson = (contentType: string | undefined) =>
  contentType === undefined || /^application\/json\s*(;|$)/i.test(contentType.trim())

/**
 * Refuses, before the body is read, a request to an operation that takes JSON whose body is
 * declared as something else (form data, XML, text...): 415 `unsupported_media_type`.
 */
export const guardContentType = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const contentType = request.headers["content-type"]
  if (isJson(contentType)) return Effect.void
  if (routeOf(request)?.route.body !== "json") return Effect.void
  return Effect.fail(
    new UnsupportedMediaType({
      error: `Content-Type ${contentType} is not supported; send the body as application/json`
    })
  )
})
