import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, Fiber } from "effect"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const code = `export function decide(data) {\n  return { operation: "hold" }\n}\n`
const typescript =
  `interface Data { candles: Array<{ close: number }> }\nexport function decide(data: Data): { operation: string } {\n  return { operation: data.candles.length > 1 ? "buy" : "hold" }\n}\n`

/** Creates a program for the user and answers the reply. */
const create = (token: string, body: Record<string, unknown> = {}) =>
  call("POST", "/api/programs", { token, body: { name: "SMA cross", code, ...body } })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`programs over ${storage.name}`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/programs answers 201 with the program; language defaults to javascript", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const reply = yield* create(token, { description: "a test" })
          expect(reply.status).toBe(201)
          expect(Object.keys(reply.body).sort()).toEqual([
            "code",
            "created_at",
            "description",
            "id",
            "language",
            "name",
            "parameters",
            "updated_at"
          ])
          expect(reply.body).toMatchObject({
            name: "SMA cross",
            description: "a test",
            language: "javascript",
            code,
            parameters: null
          })
          expect(new Date(reply.body.created_at).toISOString()).toBe(reply.body.created_at)
          expect(reply.body.updated_at).toBe(reply.body.created_at)
        }))

      it.effect("POST /api/programs accepts TypeScript and keeps the source as written", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const reply = yield* create(token, { code: typescript, language: "typescript", description: null })
          expect(reply.status).toBe(201)
          expect(reply.body).toMatchObject({ language: "typescript", code: typescript, description: null })
        }))

      it.effect("a language other than javascript or typescript answers 422 unsupported_language", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          expectError(yield* create(token, { language: "python" }), 422, "unsupported_language")
        }))

      it.effect("code that does not compile answers 422 program_invalid with line and column", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const js = yield* create(token, { code: `export function decide(data) {\n  return {(\n}` })
          expectError(js, 422, "program_invalid")
          expect({ line: js.body.line, column: js.body.column }).toEqual({ line: 2, column: 11 })
          const ts = yield* create(token, { code: `export function decide(data: number {\n}`, language: "typescript" })
          expectError(ts, 422, "program_invalid")
          expect({ line: ts.body.line, column: ts.body.column }).toEqual({ line: 1, column: 37 })
        }))

      it.effect("code without an exported decide, or that never finishes loading, answers 422 program_invalid", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const missing = yield* create(token, { code: `function decide() { return { operation: "hold" } }` })
          expectError(missing, 422, "program_invalid")
          expect(missing.body.error).toMatch(/decide/)
          expectError(
            yield* create(token, { code: `while (true) {}\nexport function decide() {}` }),
            422,
            "program_invalid"
          )
          expectError(
            yield* create(token, { code: `import fs from "fs"\nexport function decide() {}` }),
            422,
            "program_invalid"
          )
        }))

      it.effect("top-level code looping over built-ins on a huge object is stopped by its counted budget: 422, while the server keeps answering", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const stuck =
            `const o = {}\nfor (let i = 0; i < 300000; i++) o["k" + i] = i\nfor (;;) Object.keys(o)\nexport function decide() {}`
          const pending = yield* Effect.fork(create(token, { code: stuck }))
          const health = yield* call("GET", "/api/health")
          expect(health.status).toBe(200)
          const reply = yield* Fiber.join(pending)
          expectError(reply, 422, "program_invalid")
          expect(reply.body.error).toMatch(/CPU budget/)
        }))

      it.effect("POST /api/programs with a missing field, an empty name or a wrong type answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          expectError(yield* call("POST", "/api/programs", { token, body: { name: "x" } }), 400, "invalid_input")
          expectError(yield* create(token, { name: "  " }), 400, "invalid_input")
          expectError(yield* create(token, { code: 42 }), 400, "invalid_input")
        }))

      it.effect("every programs endpoint without a token answers 401 unauthorized", () =>
        Effect.gen(function*() {
          expectError(yield* call("GET", "/api/programs"), 401, "unauthorized")
          expectError(yield* call("POST", "/api/programs", { body: { name: "x", code } }), 401, "unauthorized")
          expectError(yield* call("GET", "/api/programs/1"), 401, "unauthorized")
          expectError(yield* call("DELETE", "/api/programs/1"), 401, "unauthorized")
        }))

      it.effect("GET /api/programs lists the caller's programs without code, newest first, with limit and offset", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const other = yield* signUp()
          yield* create(other.token, { name: "not mine" })
          const ids: Array<number> = []
          for (const name of ["one", "two", "three"]) ids.push((yield* create(token, { name })).body.id)
          const all = yield* call("GET", "/api/programs", { token })
          expect(all.status).toBe(200)
          expect(all.body.programs.map((p: { name: string }) => p.name)).toEqual(["three", "two", "one"])
          expect(Object.keys(all.body.programs[0]).sort()).toEqual([
            "created_at",
            "description",
            "id",
            "language",
            "name",
            "updated_at"
          ])
          const page = yield* call("GET", "/api/programs?limit=1&offset=1", { token })
          expect(page.body.programs.map((p: { id: number }) => p.id)).toEqual([ids[1]])
          expectError(yield* call("GET", "/api/programs?limit=501", { token }), 400, "invalid_input")
        }))

      it.effect("a program's declared parameters are checked when it is saved and listed in its order", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const declared = `export const parameters = {
  slow: { kind: "int", min: 20, max: 200, default: 30 },
  fast: { kind: "int", min: 2, max: 50, default: 10 },
  width: { kind: "float", min: 0.5, max: 3, default: 2 },
  side: { kind: "choice", choices: ["long", "short", "both"], default: "both" }
}
${code}`
          const created = yield* create(token, { code: declared })
          expect(created.status).toBe(201)
          expect(created.body.parameters).toEqual([
            { name: "slow", kind: "int", min: 20, max: 200, choices: null, default: 30 },
            { name: "fast", kind: "int", min: 2, max: 50, choices: null, default: 10 },
            { name: "width", kind: "float", min: 0.5, max: 3, choices: null, default: 2 },
            { name: "side", kind: "choice", min: null, max: null, choices: ["long", "short", "both"], default: "both" }
          ])
          expect((yield* call("GET", `/api/programs/${created.body.id}`, { token })).body.parameters)
            .toEqual(created.body.parameters)
          // TypeScript declares them the same way.
          const typed = yield* create(token, {
            language: "typescript",
            code: `export const parameters = { n: { kind: "int", min: 1, max: 5, default: 2 } } as const\n${typescript}`
          })
          expect(typed.body.parameters).toEqual([{ name: "n", kind: "int", min: 1, max: 5, choices: null, default: 2 }])
          // Saved without the export, the program declares none.
          yield* call("PUT", `/api/programs/${created.body.id}`, { token, body: { code } })
          expect((yield* call("GET", `/api/programs/${created.body.id}`, { token })).body.parameters).toBeNull()

          // Each broken declaration answers 422 naming what is wrong, and nothing is stored.
          const broken: ReadonlyArray<[string, string]> = [
            [
              `{ fast: { kind: "int", min: 2, max: 50, default: 60 } }`,
              "parameters.fast: default (60) must be within 2..50"
            ],
            [
              `{ fast: { kind: "int", min: 50, max: 2, default: 10 } }`,
              "parameters.fast: min (50) must be below max (2)"
            ],
            [`{ fast: { kind: "int", min: 2, max: 50, default: 2.5 } }`, "parameters.fast.default"],
            [`{ "no-dash": { kind: "int", min: 1, max: 2, default: 1 } }`, "parameters: \"no-dash\" is not a name"],
            [`{ side: { kind: "choice", choices: ["a", "a"], default: "a" } }`, "choices must not repeat"],
            [
              `{ side: { kind: "choice", choices: ["a", "b"], default: "c" } }`,
              "default (\"c\") must be one of the choices"
            ],
            [`{ x: { kind: "bool", default: true } }`, "parameters.x"],
            [`[1, 2]`, "parameters"],
            [`42`, "parameters"]
          ]
          for (const [declaration, message] of broken) {
            const reply = yield* create(token, { code: `export const parameters = ${declaration}\n${code}` })
            expectError(reply, 422, "program_invalid")
            expect(reply.body.error).toContain("The program's parameters are not valid: ")
            expect(reply.body.error).toContain(message)
          }
          // A getter that never returns is stopped by the load's budget.
          const looping = yield* create(token, {
            code: `export const parameters = { get fast() { for (;;) {} } }\n${code}`
          })
          expectError(looping, 422, "program_invalid")
          expect(looping.body.error).toContain("CPU budget")
          expect((yield* call("GET", "/api/programs", { token })).body.programs).toHaveLength(2)
        }))

      it.effect("GET /api/programs/{id} answers the program with its code", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const created = yield* create(token)
          const reply = yield* call("GET", `/api/programs/${created.body.id}`, { token })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual(created.body)
        }))

      it.effect("PUT /api/programs/{id} replaces the program and answers the listing entry", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const created = yield* create(token)
          const reply = yield* call("PUT", `/api/programs/${created.body.id}`, {
            token,
            body: { name: "renamed", code: typescript, language: "typescript", description: "now typed" }
          })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({
            id: created.body.id,
            name: "renamed",
            language: "typescript",
            description: "now typed",
            created_at: created.body.created_at,
            updated_at: reply.body.updated_at
          })
          expect(Date.parse(reply.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.created_at))
          expect((yield* call("GET", `/api/programs/${created.body.id}`, { token })).body.code).toBe(typescript)
        }))

      it.effect("PUT /api/programs/{id} with invalid code answers 422 and keeps the stored program", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const created = yield* create(token)
          const path = `/api/programs/${created.body.id}`
          expectError(
            yield* call("PUT", path, { token, body: { name: "x", code: "export const nothing = 1" } }),
            422,
            "program_invalid"
          )
          expectError(
            yield* call("PUT", path, { token, body: { name: "x", code, language: "cobol" } }),
            422,
            "unsupported_language"
          )
          expect((yield* call("GET", path, { token })).body).toEqual(created.body)
        }))

      it.effect("DELETE /api/programs/{id} answers 204, and the program is gone", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const created = yield* create(token)
          const reply = yield* call("DELETE", `/api/programs/${created.body.id}`, { token })
          expect(reply.status).toBe(204)
          expect(reply.text).toBe("")
          expectError(yield* call("GET", `/api/programs/${created.body.id}`, { token }), 404, "not_found")
          expectError(yield* call("DELETE", `/api/programs/${created.body.id}`, { token }), 404, "not_found")
        }))

      it.effect("another user's program answers 403 forbidden to GET, PUT and DELETE, and stays intact", () =>
        Effect.gen(function*() {
          const owner = yield* signUp()
          const intruder = yield* signUp()
          const created = yield* create(owner.token)
          const path = `/api/programs/${created.body.id}`
          expectError(yield* call("GET", path, { token: intruder.token }), 403, "forbidden")
          expectError(
            yield* call("PUT", path, { token: intruder.token, body: { name: "mine", code } }),
            403,
            "forbidden"
          )
          expectError(yield* call("DELETE", path, { token: intruder.token }), 403, "forbidden")
          expect((yield* call("GET", path, { token: owner.token })).body).toEqual(created.body)
        }))

      it.effect("an unknown program id answers 404 not_found, and a non-numeric one 400 invalid_input", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          expectError(yield* call("GET", "/api/programs/999999", { token }), 404, "not_found")
          expectError(
            yield* call("PUT", "/api/programs/999999", { token, body: { name: "x", code } }),
            404,
            "not_found"
          )
          expectError(yield* call("DELETE", "/api/programs/999999", { token }), 404, "not_found")
          expectError(yield* call("GET", "/api/programs/abc", { token }), 400, "invalid_input")
        }))
    })
  })
}
