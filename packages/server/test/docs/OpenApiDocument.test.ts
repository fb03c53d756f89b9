import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Authentication, errorCatalogue, TradingApi } from "@trading-platform/core"
import { openApiDocument } from "@trading-platform/server"
import { readFileSync } from "node:fs"

const document = openApiDocument()
// The contract's operations; the WebSocket (`/api/ws`) is served and documented beside it.
const operations = new Map(
  Object.entries<any>(document.paths).filter(([path]) => path !== "/api/ws").flatMap(([, item]) =>
    Object.values<any>(item)
  ).map((op) => [op.operationId, op])
)

/** Every endpoint of the contract with what the document must say about it. */
const endpoints: Array<{ id: string; authenticated: boolean; errorStatuses: Array<number> }> = []
HttpApi.reflect(TradingApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, errors, group, middleware }) =>
    endpoints.push({
      id: group.topLevel ? endpoint.name : `${group.identifier}.${endpoint.name}`,
      authenticated: middleware.has(Authentication as any),
      errorStatuses: [...errors.keys()]
    })
})

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    expect(document.openapi).toBe("3.1.0")
    const result = await new Validator().validate(structuredClone(document) as any)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it("is the one committed in docs/openapi.json (run `npm run openapi` after changing the contract)", () => {
    const committed = JSON.parse(readFileSync(new URL("../../../../docs/openapi.json", import.meta.url), "utf8"))
    expect(committed).toEqual(JSON.parse(JSON.stringify(document)))
  })

  it("has every endpoint, each with its error responses in the envelope", () => {
    expect(endpoints.length).toBeGreaterThan(0)
    expect([...operations.keys()].sort()).toEqual(endpoints.map((e) => e.id).sort())
    for (const endpoint of endpoints) {
      const responses = operations.get(endpoint.id).responses
      const expected = [...endpoint.errorStatuses, ...(endpoint.authenticated ? [401] : [])]
      expect(Object.keys(responses), endpoint.id).toEqual(expect.arrayContaining([...new Set(expected)].map(String)))
      for (const status of expected) {
        expect(responses[status].content["application/json"].schema, `${endpoint.id} ${status}`).toBeDefined()
      }
    }
  })

  it("offers both security schemes on every endpoint that needs a token, and none on the others", () => {
    expect(document.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer" }),
      sessionToken: expect.objectContaining({ type: "apiKey", in: "query", name: "session_token" })
    })
    for (const endpoint of endpoints) {
      expect(operations.get(endpoint.id).security, endpoint.id).toEqual(
        endpoint.authenticated ? [{ bearer: [] }, { sessionToken: [] }] : []
      )
    }
    expect(endpoints.some((e) => e.authenticated) && endpoints.some((e) => !e.authenticated)).toBe(true)
  })

  it("documents the answers' headers, its server, the WebSocket, and no check names as titles", () => {
    expect(document.servers).toEqual([{ url: "/", description: expect.any(String) }])
    const login = operations.get("users.login").responses
    expect(Object.keys(login["200"].headers).sort()).toEqual([
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "X-Request-Id"
    ])
    expect(login["429"].headers["Retry-After"]).toEqual({ $ref: "#/components/headers/Retry-After" })
    expect(login["405"].headers).toEqual({ Allow: { $ref: "#/components/headers/Allow" } })
    expect(Object.keys((document.components as any).headers)).toContain("Retry-After")
    const ws = (document.paths as any)["/api/ws"].get
    expect(Object.keys(ws.responses)).toEqual(["101", "401", "429"])
    expect(ws.description).toContain("`backtest:{id}`")
    // Effect titles a refined schema with its check (`positive`, `maxLength(20)`): none are left.
    expect(JSON.stringify(document.paths)).not.toMatch(/"title":"/)
    expect(JSON.stringify(document.components)).not.toMatch(/"title":"/)
  })

  it("says what the server checks of trimmed text, and gives an insight's task_id one type", () => {
    const body = (id: string) => operations.get(id).requestBody.content["application/json"].schema
    expect(body("users.register").properties.email).toMatchObject({ format: "email", pattern: "\\S", maxLength: 254 })
    expect(body("news.create").properties.url).toMatchObject({ format: "uri", pattern: "\\S" })
    expect(body("accounts.create").properties.name).toMatchObject({ pattern: "\\S", maxLength: 100 })
    for (const property of [body("accounts.create").properties.name, body("users.register").properties.email]) {
      expect(property.description).toMatch(/^Trimmed, then /)
    }
    const taskPath = operations.get("assistant.insightTask").parameters.find((p: any) => p.name === "task_id").schema
    const taskAnswer = (document.components.schemas as any).InsightTask.properties.task_id
    expect(taskPath).toEqual(taskAnswer)
  })

  it("describes a 400 as the invalid_input envelope only, without Effect's HttpApiDecodeError", () => {
    expect(JSON.stringify(document)).not.toMatch(/HttpApiDecodeError/)
    const invalidInput = errorCatalogue.find((row) => row.code === "invalid_input")!
    for (const [id, op] of operations) {
      expect(op.responses["400"], id).toEqual({
        description: invalidInput.description,
        content: { "application/json": { schema: { $ref: "#/components/schemas/InvalidInput" } } }
      })
    }
    expect((document.components.schemas as any).InvalidInput.properties.code).toEqual({
      type: "string",
      enum: ["invalid_input"]
    })
  })
})
