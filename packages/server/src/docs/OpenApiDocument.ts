import { HttpApi, HttpApiBuilder, OpenApi } from "@effect/platform"
import { errorCatalogue, TradingApi } from "@trading-platform/core"
import { Context, Layer } from "effect"
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
  JSON.parse(JSON.stringify(spec, (_, value) =>
    value !== null && typeof value === "object" && value.$id === "/schemas/unknown"
      ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== "$id"))
      : value))

/** The contract as documented: the server's version, without Effect's own decode error, valid as 3.1. */
const DocumentedApi = TradingApi.annotate(OpenApi.Version, version).annotate(
  OpenApi.Transform,
  (spec) => withoutUnknownIds(withoutDecodeError(spec))
)

/** The OpenAPI 3.1 document of the whole contract (`GET /openapi.json`, `docs/openapi.json`). */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(DocumentedApi)

/** Provides the documented contract to the layers that render it, leaving the served API as it is. */
export const Documented = Layer.succeed(HttpApi.Api, {
  api: DocumentedApi as unknown as HttpApi.Api["Type"]["api"],
  context: Context.empty()
})

/** `GET /openapi.json`: the document, served next to the API. */
export const OpenApiLive = HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }).pipe(Layer.provide(Documented))
