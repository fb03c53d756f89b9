import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { errorCatalogue, TradingApi } from "@trading-platform/core"
import { Effect } from "effect"
import { version } from "../Version.js"

const refTo = (name: string) => `#/components/schemas/${name}`
const referencedSchemas = (value: unknown) =>
  [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!)

// The 400 response keeps the decode error's description unless told otherwise.
const invalidInputDescription = errorCatalogue.find((row) => row.code === "invalid_input")?.description

/**
 * HttpApi always declares its own `HttpApiDecodeError` for 400, but the server answers every 400
 * with the `invalid_input` envelope (http/ApiMiddleware.ts), so the document must not offer it.
 * Schemas only it referenced (its `Issue`, `PropertyKey`) go with it.
 */
const withoutDecodeError = (spec: Record<string, any>): Record<string, any> => {
  const document = structuredClone(spec)
  for (const operation of Object.values<any>(document.paths).flatMap((item) => Object.values<any>(item))) {
    const response = operation.responses?.["400"]
    const content = response?.content?.["application/json"]
    const options: Array<{ $ref?: string }> | undefined = content?.schema?.anyOf
    if (!options) continue
    const kept = options.filter((option) => option.$ref !== refTo("HttpApiDecodeError"))
    content.schema = kept.length === 1 ? kept[0] : { ...content.schema, anyOf: kept }
    response.description = invalidInputDescription
  }
  const schemas: Record<string, unknown> = document.components.schemas
  const unused = ["HttpApiDecodeError"]
  while (unused.length > 0) {
    const name = unused.pop()!
    if (!(name in schemas)) continue
    const schema = schemas[name]
    delete schemas[name]
    const rest = JSON.stringify(document)
    unused.push(...referencedSchemas(schema).filter((ref) => !rest.includes(`"${refTo(ref)}"`)))
  }
  return document
}

/**
 * Effect renders every free-form value (`Schema.Unknown`) as `{"$id": "/schemas/unknown"}`; a
 * document with two of them is invalid (an `$id` must be unique), and `{}` means the same thing.
 */
const withoutUnknownIds = (spec: Record<string, any>): Record<string, any> =>
  JSON.parse(
    JSON.stringify(spec, (_, value) =>
      value !== null && typeof value === "object" && value.$id === "/schemas/unknown"
        ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== "$id"))
        : value)
  )

/**
 * Effect titles a refined schema with its check (`positive`, `maxLength(20)`); the check is
 * already in the schema's keywords and description, and the contract sets no titles of its own.
 */
const withoutCheckTitles = (spec: Record<string, any>): Record<string, any> =>
  JSON.parse(
    JSON.stringify(spec, (key, value) =>
      value !== null && typeof value === "object" && !Array.isArray(value) && key !== "info" &&
        typeof value.title === "string"
        ? Object.fromEntries(
          Object.entries(value).filter(([k]) =>
            k !== "title"
          )
        )
        : value)
  )

const integerHeader = (description: string) => ({ description, schema: { type: "integer" } })

/** Headers of the answers, documented once (`components.headers`) and referenced by each response. */
const headers = {
  "X-RateLimit-Limit": integerHeader("Requests allowed in the current window (docs/limits.md); on every answer"),
  "X-RateLimit-Remaining": integerHeader("Requests left in the window; on every answer"),
  "X-RateLimit-Reset": integerHeader("UNIX time, in seconds, when the window's count resets; on every answer"),
  "X-Request-Id": { description: "This request's id, also the error's `request_id`", schema: { type: "string" } },
  "Retry-After": integerHeader("Whole seconds to wait before trying again (as `retry_after` in the body)"),
  "Allow": { description: "The methods the path takes", schema: { type: "string" } }
}

const headerRef = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` })

/**
 * The headers of the answers, where they matter: the rate-limit counts and the request id on a
 * success and on a 429 (every answer has them; an error's body also carries `request_id`),
 * `Retry-After` on 429 and 503, `Allow` on 405.
 */
const withHeaders = (spec: Record<string, any>): Record<string, any> => {
  const document = structuredClone(spec)
  document.components.headers = headers
  for (const operation of Object.values<any>(document.paths).flatMap((item) => Object.values<any>(item))) {
    for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
      const counted = status.startsWith("2") || status === "429"
      const added = {
        ...(counted
          ? {
            "X-RateLimit-Limit": headerRef("X-RateLimit-Limit"),
            "X-RateLimit-Remaining": headerRef("X-RateLimit-Remaining"),
            "X-RateLimit-Reset": headerRef("X-RateLimit-Reset"),
            "X-Request-Id": headerRef("X-Request-Id")
          }
          : {}),
        ...(status === "429" || status === "503" ? { "Retry-After": headerRef("Retry-After") } : {}),
        ...(status === "405" ? { "Allow": headerRef("Allow") } : {})
      }
      if (Object.keys(added).length > 0) response.headers = { ...response.headers, ...added }
    }
  }
  return document
}

/** The WebSocket, served beside the contract (docs/streams.md), documented as the upgrade it is. */
const webSocket = {
  get: {
    tags: ["Streams"],
    operationId: "streams.webSocket",
    summary: "A WebSocket of channels: prices, your triggers, news and a backtest's progress",
    description: "Upgrades to a WebSocket. Authenticate with the token in the request, or send " +
      "`{\"type\": \"auth\", \"token\": T}` as the first message within 5 s. Every message is a JSON object " +
      "with a `type`. Client to server: `subscribe` and `unsubscribe` `{channel}`, `ping`, `auth`. Server to client: " +
      "`subscribed`/`unsubscribed` `{channel}`, `event` `{channel, data}`, `pong`, `error` `{channel, code, error}`. " +
      "Channels: `prices:{SYMBOL}`, `triggers`, `news:{SYMBOL}`, `backtest:{id}`. Past 240 client messages a minute " +
      "the socket closes with 1008; on shutdown with 1001. One stream per session token. A message over 64 KiB " +
      "closes it with 1009; more than 64 messages waiting to be handled, or more than 10 unauthenticated sockets " +
      "from one address, with 1013 (docs/streams.md).",
    // The token may also come as the first message instead.
    security: [{ bearer: [] }, { sessionToken: [] }, {}],
    parameters: [{
      name: "session_token",
      in: "query",
      required: false,
      description: "The token, for clients that cannot set a header",
      schema: { type: "string" }
    }],
    responses: {
      "101": { description: "Switching Protocols: the WebSocket is open" },
      "401": {
        description: "A token was given in the request and is missing its user, expired or revoked",
        content: { "application/json": { schema: { $ref: refTo("Unauthorized") } } }
      },
      "429": {
        description: "Another stream is open on this token, or the request quota is spent",
        content: { "application/json": { schema: { $ref: refTo("RateLimited") } } }
      }
    }
  }
}

/** The address the document is served from is the API's; a client generated from it calls the same server. */
const servers = [{ url: "/", description: "The server that serves this document" }]

const withWebSocket = (spec: Record<string, any>): Record<string, any> => ({
  ...spec,
  servers,
  paths: { ...spec.paths, "/api/ws": webSocket }
})

/** The groups in the order a user meets them; a group not listed here follows them. */
const tagOrder = [
  "Health",
  "Users and sessions",
  "Accounts",
  "Venue connections",
  "Market data",
  "Programs",
  "Backtests",
  "Analytics",
  "Trader history"
]

const inTagOrder = (spec: Record<string, any>): Record<string, any> => {
  const rank = (tag: { name: string }) => (tagOrder.includes(tag.name) ? tagOrder.indexOf(tag.name) : tagOrder.length)
  return { ...spec, tags: [...spec.tags].sort((a, b) => rank(a) - rank(b)) }
}

/** The document's introduction: the first calls, then authentication. */
const description = [
  "Start here: `POST /api/users/register` with `{email, password, username}`, then `POST /api/users/login` " +
  "with `{email, password}`; its `session_token` authorizes every other call. Then create an account " +
  "(`POST /api/account`), read prices (`POST /api/market/prices`), store a trading program " +
  "(`POST /api/programs`) and backtest it (`POST /api/programs/{id}/backtest`, then poll " +
  "`GET /api/programs/backtest/{id}`). Every request body below has an example that works as it is.",
  "Authentication: send the token as `Authorization: Bearer <session_token>` (the `session_token` query " +
  "parameter is accepted for older clients). A token lasts 180 days by default; `POST /api/users/logout` " +
  "revokes it and a password change revokes them all. Failures answer `{error, code, request_id}` with a " +
  "stable `code`; 429 carries `retry_after` and a `Retry-After` header.",
  "Checks: a body field the operation does not know answers 400 naming it. Text is checked as JavaScript " +
  "counts it: `minLength` and `maxLength` are in UTF-16 code units, so a character outside the Basic " +
  "Multilingual Plane (an emoji) counts as 2; a NUL character or an unpaired surrogate is refused. Ids are 1 " +
  "to 2147483647."
].join("\n\n")

/** The contract as documented: the server's version, without Effect's own decode error, valid as 3.1. */
export const DocumentedApi = TradingApi.annotate(OpenApi.Version, version)
  .annotate(OpenApi.Description, description)
  .annotate(
    OpenApi.Transform,
    (spec) => inTagOrder(withHeaders(withWebSocket(withoutCheckTitles(withoutUnknownIds(withoutDecodeError(spec))))))
  )

/** The OpenAPI 3.1 document of the whole contract (`GET /openapi.json`, `docs/openapi.json`). */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(DocumentedApi)

/**
 * `GET /openapi.json`: the document, served next to the API. It is built on the first request
 * and kept: building it walks every schema of the contract, which start-up need not wait for.
 */
export const OpenApiLive = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(
    Effect.cached(Effect.suspend(() => HttpServerResponse.json(openApiDocument())).pipe(Effect.orDie)),
    (response) => router.get("/openapi.json", response)
  )
)
