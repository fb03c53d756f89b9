import { HttpApi, HttpMethod, HttpServerRequest } from "@effect/platform"
import { TradingApi, UnsupportedMediaType } from "@trading-platform/core"
import { Effect } from "effect"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

type Route = { readonly method: string; readonly path: RegExp }

/**
 * Method and path pattern of every operation with a body (from the contract, so new ones are
 * covered): those whose body is JSON, and those whose body streams into the handler as it arrives
 * (a file), which caps what it reads itself.
 */
const bodyRoutes = (() => {
  const routes = { json: [] as Array<Route>, streamed: [] as Array<Route> }
  HttpApi.reflect(TradingApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      if (!HttpMethod.hasBody(endpoint.method) || payloads.size === 0) return
      const pattern = endpoint.path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : escape(part))).join("/")
      const route = { method: endpoint.method, path: new RegExp(`^${pattern}/?$`) }
      if (payloads.has("application/json")) routes.json.push(route)
      else routes.streamed.push(route)
    }
  })
  return routes
})()

const matches = (routes: ReadonlyArray<Route>, request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?", 1)[0] ?? "/"
  return routes.some((route) => route.method === request.method && route.path.test(path))
}

/** Whether the request's body streams into its handler, which caps it, rather than being read whole. */
export const isStreamedBody = (request: HttpServerRequest.HttpServerRequest) => matches(bodyRoutes.streamed, request)

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
  if (!matches(bodyRoutes.json, request)) return Effect.void
  return Effect.fail(
    new UnsupportedMediaType({
      error: `Content-Type ${contentType} is not supported; send the body as application/json`
    })
  )
})
