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
  "stable `code`; 429 carries `retry_after` and a `Retry-After` header."
].join("\n\n")

/** The contract as documented: the server's version, without Effect's own decode error, valid as 3.1. */
export const DocumentedApi = TradingApi.annotate(OpenApi.Version, version)
  .annotate(OpenApi.Description, description)
  .annotate(OpenApi.Transform, (spec) => inTagOrder(withoutUnknownIds(withoutDecodeError(spec))))

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
