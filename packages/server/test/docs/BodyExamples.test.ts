import { HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { parseErrorIssues, TradingApi } from "@trading-platform/core"
import { openApiDocument } from "@trading-platform/server"
import { Either, Option, Schema, SchemaAST } from "effect"

const endpoints = Object.values(TradingApi.groups).flatMap((group) => Object.values(group.endpoints))

describe("request body examples (what /docs offers to send)", () => {
  it("every JSON body has an example, every example is a valid request, and one with an unknown field is not", () => {
    // A file upload (the candle import) is sent as the file itself: /docs offers a file picker.
    const withBody = endpoints.filter((endpoint) =>
      Option.isSome(endpoint.payloadSchema) &&
      HttpApiSchema.getEncoding(endpoint.payloadSchema.value.ast).kind === "Json"
    )
    expect(withBody.length).toBeGreaterThan(10)
    for (const endpoint of withBody) {
      const schema = Option.getOrThrow(endpoint.payloadSchema) as Schema.Schema<unknown, unknown>
      const examples = Option.getOrElse(SchemaAST.getExamplesAnnotation(schema.ast), () => [])
      expect(examples.length, `${endpoint.method} ${endpoint.path}`).toBeGreaterThan(0)
      for (const example of examples) {
        const decoded = Schema.decodeUnknownEither(schema)(example)
        expect(Either.isRight(decoded), `${endpoint.method} ${endpoint.path}: ${JSON.stringify(example)}`).toBe(true)
        // Every body is strict: the same example with a field it does not know is refused, naming it.
        const extra = Schema.decodeUnknownEither(schema)({ ...(example as object), not_a_field: 1 })
        expect(
          Either.isLeft(extra) && parseErrorIssues(extra.left).map((issue) => issue.path),
          `${endpoint.method} ${endpoint.path}`
        ).toEqual(["not_a_field"])
      }
    }
  })

  it("the document carries them, with start and end as date-times", () => {
    const body = openApiDocument().paths["/api/programs/{id}/backtest"]?.post?.requestBody as any
    const schema = body.content["application/json"].schema
    expect(schema.examples[0]).toEqual({
      symbol: "BTC",
      timeframe: "1h",
      start: "2025-01-01T00:00:00Z",
      end: "2025-02-01T00:00:00Z"
    })
    expect(schema.properties.start).toMatchObject({ type: "string", format: "date-time" })
    expect(schema.properties.end).toMatchObject({ type: "string", format: "date-time" })
  })

  it("the document introduces the API (first calls, then authentication) and orders its tags as a user meets them", () => {
    const document = openApiDocument()
    const [start, auth] = document.info.description!.split("\n\n")
    expect(start).toContain("POST /api/users/register")
    expect(auth).toContain("Authorization: Bearer")
    expect(document.tags.map((tag) => tag.name).slice(0, 5)).toEqual([
      "Health",
      "Users and sessions",
      "Accounts",
      "Venue connections",
      "Market data"
    ])
  })
})
