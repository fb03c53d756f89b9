import { type HttpApiGroup, HttpApiSchema, HttpMethod, type HttpServerRequest } from "@effect/platform"
import { TradingApi } from "@trading-platform/core"
import { Option } from "effect"
import type * as AST from "effect/SchemaAST"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** One operation of the contract: its group and name, its method, its path (and as a pattern with the names of its parameters), and its body. */
export interface Route {
  readonly group: string
  readonly endpoint: string
  readonly method: HttpMethod.HttpMethod
  /** As the contract writes it (`/api/account/:id`). */
  readonly path: string
  readonly pattern: RegExp
  readonly params: ReadonlyArray<string>
  /** `json`: read whole as JSON; `streamed`: a file that streams into its handler, which caps it. */
  readonly body: "json" | "streamed" | "none"
}

/**
 * How an operation's body is read, as `HttpApi` reads its payload: none without one; JSON when a
 * member of it (or it) is JSON, neither multipart nor of another declared encoding; else streamed.
 */
const bodyOf = (method: HttpMethod.HttpMethod, payload: AST.AST | undefined): Route["body"] => {
  if (!HttpMethod.hasBody(method) || payload === undefined) return "none"
  const members = payload._tag === "Union" ? payload.types : [payload]
  const fallback = HttpApiSchema.getEncoding(payload)
  const json = (member: AST.AST) =>
    !HttpApiSchema.getMultipart(member) && !HttpApiSchema.getMultipartStream(member) &&
    HttpApiSchema.getEncoding(member, fallback).contentType === "application/json"
  return members.some(json) ? "json" : "streamed"
}

/**
 * Every operation, read from the contract's groups and endpoints so a new one is covered without a
 * list kept by hand. Not through `HttpApi.reflect`, which also works out every endpoint's
 * success and error schemas: ~20 ms at each start for answers these routes do not use.
 */
export const routes: ReadonlyArray<Route> = (
  // Read as any group, as `HttpApi.reflect` reads them: the contract's own types are too precise to compare.
  Object.values(TradingApi.groups) as unknown as ReadonlyArray<HttpApiGroup.HttpApiGroup.AnyWithProps>
).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint): Route => {
    const parts = endpoint.path.split("/")
    const pattern = parts.map((part) => (part.startsWith(":") ? "([^/]+)" : escape(part))).join("/")
    return {
      group: group.identifier,
      endpoint: endpoint.name,
      method: endpoint.method,
      path: endpoint.path,
      pattern: new RegExp(`^${pattern}/?$`),
      params: parts.filter((part) => part.startsWith(":")).map((part) => part.slice(1)),
      body: bodyOf(endpoint.method, Option.getOrUndefined(endpoint.payloadSchema)?.ast)
    }
  })
)
  // Static segments before parameters, as the router matches them (`/account/list` before `/account/:id`).
  .sort((a, b) => a.params.length - b.params.length)

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?", 1)[0] ?? "/"

/** The operation a request is for, if any, with its path parameters' raw (still encoded) values by name. */
export const routeOf = (request: HttpServerRequest.HttpServerRequest) => {
  const path = pathOf(request)
  for (const route of routes) {
    if (route.method !== request.method) continue
    const match = route.pattern.exec(path)
    if (match) return { route, params: route.params.map((name, i) => [name, match[i + 1]!] as const) }
  }
  return undefined
}

/** The methods the contract has for the request's path (empty when the path is unknown). */
export const allowedMethods = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const path = pathOf(request)
  return [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))]
}
