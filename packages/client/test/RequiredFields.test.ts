import { describe, expect, it } from "@effect/vitest"
import { TradingApi } from "@trading-platform/core/contract"
import { Option, Schema, SchemaAST } from "effect"
import { fileURLToPath } from "node:url"
import { typeErrors } from "../../../test/support/TypeCheck.js"

const optionalKeys = (ast: SchemaAST.AST) =>
  SchemaAST.getPropertySignatures(ast).filter((p) => p.isOptional).map((p) => String(p.name)).sort()

describe("the clients ask only for what the API requires", () => {
  it("every operation of both clients type-checks with only its required fields (types/RequiredFields.ts)", {
    timeout: 120_000
  }, async () => {
    expect(await typeErrors([fileURLToPath(new URL("./types/RequiredFields.ts", import.meta.url))])).toEqual([])
  })

  // The clients' input types are the contract's type side: a field the wire may leave out must be
  // optional there too, or the clients demand what the API defaults.
  it("in every endpoint's path, query and body, a field optional on the wire is optional for the client", () => {
    const endpoints = Object.values(TradingApi.groups).flatMap((group) => Object.values(group.endpoints))
    expect(endpoints.length).toBeGreaterThan(20)
    for (const endpoint of endpoints) {
      for (const schema of [endpoint.pathSchema, endpoint.urlParamsSchema, endpoint.payloadSchema]) {
        if (Option.isNone(schema)) continue
        const { ast } = schema.value as Schema.Schema.Any
        expect(optionalKeys(SchemaAST.typeAST(ast)), `${endpoint.method} ${endpoint.path}`).toEqual(
          optionalKeys(SchemaAST.encodedAST(ast))
        )
      }
    }
  })
})
