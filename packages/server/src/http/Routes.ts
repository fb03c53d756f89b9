import { HttpApi, HttpMethod, type HttpServerRequest } from "@effect/platform"
import { TradingApi } from "@trading-platform/core"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** One operation of the contract: its method, its path as a pattern with the names of its parameters, and its body. */
export interface Route {
  readonly method: string
  readonly path: RegExp
  readonly params: ReadonlyArray<string>
  /** `json`: read whole as JSON; `streamed`: a file that streams into its handler, which caps it. */
  readonly body: "json" | "streamed" | "none"
}

/** Every operation, derived from the contract so a new one is covered without a list kept by hand. */
const routes: ReadonlyArray<Route> = (() => {
  const all: Array<Route> = []
  HttpApi.reflect(TradingApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      const parts = endpoint.path.split("/")
      const pattern = parts.map((part) => (part.startsWith(":") ? "([^/]+)" : escape(part))).join("/")
      all.push({
        method: endpoint.method,
        path: new RegExp(`^${pattern}/?$`),
        params: parts.filter((part) => part.startsWith(":")).map((part) => part.slice(1)),
        body: !HttpMethod.hasBody(endpoint.method) || payloads.size === 0
          ? "none"
          : payloads.has("application/json")
          ? "json"
          : "streamed"
      })
    }
  })
  // Static segments before parameters, as the router matches them (`/account/list` before `/account/:id`).
  return all.sort((a, b) => a.params.length - b.params.length)
})()

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?", 1)[0] ?? "/"

/** The operation a request is for, if any, with its path parameters' raw (still encoded) values by name. */
export const routeOf = (request: HttpServerRequest.HttpServerRequest) => {
  const path = pathOf(request)
  for (const route of routes) {
    if (route.method !== request.method) continue
    const match = route.path.exec(path)
    if (match) return { route, params: route.params.map((name, i) => [name, match[i + 1]!] as const) }
  }
  return undefined
}

/** The methods the contract has for the request's path (empty when the path is unknown). */
export const allowedMethods = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const path = pathOf(request)
  return [...new Set(routes.filter((route) => route.path.test(path)).map((route) => route.method))]
}
