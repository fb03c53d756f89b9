import { HttpApi, HttpMethod, HttpServerRequest } from "@effect/platform"
import { TradingApi, UnsupportedMediaType } from "@trading-platform/core"
import { Effect } from "effect"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Method and path pattern of every operation whose body is JSON (from the contract, so new ones are covered). */
const jsonBodyRoutes = (() => {
  const routes: Array<{ readonly method: string; readonly path: RegExp }> = []
  HttpApi.reflect(TradingApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      if (!HttpMethod.hasBody(endpoint.method) || !payloads.has("application/json")) return
      const pattern = endpoint.path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : escape(part))).join("/")
      routes.push({ method: endpoint.method, path: new RegExp(`^${pattern}/?$`) })
    }
  })
  return routes
})()

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
  const path = request.url.split("?", 1)[0] ?? "/"
  if (!jsonBodyRoutes.some((route) => route.method === request.method && route.path.test(path))) return Effect.void
  return Effect.fail(
    new UnsupportedMediaType({
      error: `Content-Type ${contentType} is not supported; send the body as application/json`
    })
  )
})
