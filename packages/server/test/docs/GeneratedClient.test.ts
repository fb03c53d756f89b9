import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import openapiTS, { astToString } from "openapi-typescript"
import { typeErrors } from "../../../../test/support/TypeCheck.js"
import { baseUrl, TestServer } from "../support/TestServer.js"

// Under the repository, so the program resolves openapi-fetch as a user's project would.
const dir = fileURLToPath(new URL("../../../../node_modules/.cache/generated-client-check/", import.meta.url))

/** A user's first program on a client generated from the document: ids and limits are numbers, bodies take only what is required. */
const program = `import createClient from "openapi-fetch"
import type { paths } from "./schema.js"

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:3000" })
const { data: login } = await client.POST("/api/users/login", { body: { email: "ada@example.com", password: "correct horse" } })
const headers = { authorization: \`Bearer \${login?.session_token}\` }
const { data: created } = await client.POST("/api/programs", {
  body: { name: "always hold", code: "export function decide() { return { operation: 'hold' } }" },
  headers
})
if (created !== undefined) {
  const id: number = created.id
  const { data: backtest } = await client.POST("/api/programs/{id}/backtest", {
    params: { path: { id } },
    body: { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-02-01T00:00:00Z" },
    headers
  })
  const status: "queued" | "running" | "completed" | "failed" | "cancelled" | undefined = backtest?.status
  const { data: history } = await client.GET("/api/programs/backtest/history", { params: { query: { program_id: id, limit: 10 } }, headers })
  console.log(status, history?.backtests.length)
  // @ts-expect-error a path id is an integer, not its text
  await client.GET("/api/programs/{id}", { params: { path: { id: "1" } }, headers })
}
`

describe("a client generated from /openapi.json (openapi-typescript + openapi-fetch)", () => {
  layer(TestServer(), { timeout: "120 seconds" })((it) => {
    it.effect(
      "type-checks a short program: integer ids, numeric query parameters, bodies with only the required fields",
      () =>
        Effect.gen(function*() {
          const url = yield* baseUrl
          const document = yield* Effect.promise(() => fetch(`${url}/openapi.json`).then((r) => r.json()))
          const schema = astToString(yield* Effect.promise(() => openapiTS(document)))
          rmSync(dir, { recursive: true, force: true })
          mkdirSync(dir, { recursive: true })
          writeFileSync(`${dir}schema.d.ts`, schema)
          writeFileSync(`${dir}program.ts`, program)
          expect(yield* Effect.promise(() => typeErrors([`${dir}program.ts`]))).toEqual([])
          rmSync(dir, { recursive: true })
        }),
      120_000
    )
  })
})
