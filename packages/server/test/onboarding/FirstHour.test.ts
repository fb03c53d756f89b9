import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { BacktestServer, isFinished, marketNow, shortRun, waitForBacktest } from "../support/Backtests.js"
import { baseUrl, call, expectError, signUp } from "../support/TestServer.js"

const hold = `export function decide(data) {\n  return { operation: "hold" }\n}\n`
const typescript =
  `export function decide(data: { bar: { close: number } }): { operation: string } {\n  return { operation: "hold" }\n}\n`
/** Answers a made-up operation at its third bar. */
const moon =
  `let n = 0\nexport function decide(data) {\n  return ++n < 3 ? { operation: "hold" } : { operation: "moon" }\n}\n`
const asyncDecide = `export async function decide(data) {\n  return { operation: "buy" }\n}\n`

const withProgram = (code: string, language?: string) =>
  Effect.gen(function*() {
    const user = yield* signUp("first")
    const body = { name: "first", code, ...(language === undefined ? {} : { language }) }
    const created = yield* call("POST", "/api/programs", { token: user.token, body })
    expect(created.status).toBe(201)
    return { ...user, programId: created.body.id as number, program: created.body }
  })

const runToTheEnd = (code: string) =>
  Effect.gen(function*() {
    const { programId, token } = yield* withProgram(code)
    const submitted = yield* call("POST", `/api/programs/${programId}/backtest`, { token, body: shortRun })
    expect(submitted.status).toBe(202)
    return yield* waitForBacktest(token, submitted.body.id, isFinished)
  })

describe("the first hour of a new user", () => {
  layer(BacktestServer(testStorages[0]!), { timeout: "120 seconds" })((it) => {
    it.effect("GET / goes to the reference page and GET /api/ says what the API is", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const root = yield* Effect.promise(() => fetch(`${base}/`, { redirect: "manual" }))
        expect(root.status).toBe(302)
        expect(root.headers.get("location")).toBe("/docs")
        for (const path of ["/api/", "/api"]) {
          const index = yield* call("GET", path)
          expect(index.status).toBe(200)
          expect(index.body).toMatchObject({ docs: "/docs", openapi: "/openapi.json", health: "/api/health" })
          expect(index.body.start_here).toContain("/api/users/login")
        }
      }))

    it.effect("an enum query parameter out of range answers one issue naming the allowed values", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("first")
        const reply = yield* call("GET", "/api/programs/backtest/history?status=done&limit=abc", { token })
        expectError(reply, 400, "invalid_input")
        expect(reply.body.issues).toEqual([
          { path: "status", message: "must be one of queued, running, completed, failed, cancelled; got 'done'" },
          { path: "limit", message: "must be a number; got 'abc'" }
        ])
        expect(reply.body.error).toBe(
          "Invalid request: status must be one of queued, running, completed, failed, cancelled; got 'done'; limit must be a number; got 'abc'"
        )
      }))

    it.effect("a bad backtest body answers one issue per field, without Effect's schema text", () =>
      Effect.gen(function*() {
        const { programId, token } = yield* withProgram(hold)
        const reply = yield* call("POST", `/api/programs/${programId}/backtest`, {
          token,
          body: { symbol: "BTC", timeframe: "2h", start: "2025-01-01", leverage: 500 }
        })
        expectError(reply, 400, "invalid_input")
        expect(reply.body.issues).toEqual([
          { path: "timeframe", message: "must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'" },
          { path: "end", message: "is missing" },
          { path: "leverage", message: "must be a number between 1 and 125; got 500" }
        ])
      }))

    it.effect("a body that is not a JSON object says so, without listing the whole expected type", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("first")
        const reply = yield* call("POST", "/api/account", { token, body: "hello" })
        expectError(reply, 400, "invalid_input")
        expect(reply.body.error).toBe("Invalid request: must be a JSON object; got 'hello'")
        expect(reply.text).not.toContain("readonly")
      }))

    it.effect(
      "a program answering an unknown operation fails its backtest saying so, with the bar's time",
      () =>
        Effect.gen(function*() {
          const done = yield* runToTheEnd(moon)
          expect(done.status).toBe("failed")
          // The third bar the program sees: the third of the 500 hourly bars of the warm-up before the start.
          expect(done.error).toBe(
            "Program error (invalid_decision) at the warm-up bar of 2024-12-11T06:00:00.000Z: decide returned an invalid " +
              "decision: operation must be one of buy, sell, hold, close; got 'moon'"
          )
        }),
      120_000
    )

    it.effect("an async decide fails its backtest saying that it returned a Promise", () =>
      Effect.gen(function*() {
        const done = yield* runToTheEnd(asyncDecide)
        expect(done.status).toBe("failed")
        expect(done.error).toContain("decide returned a Promise; it must return its decision directly")
      }), 120_000)

    it.effect("PUT /api/programs/{id} patches: a rename alone keeps code and language, and TypeScript stays TypeScript", () =>
      Effect.gen(function*() {
        const { program, programId, token } = yield* withProgram(typescript, "typescript")
        const path = `/api/programs/${programId}`
        const renamed = yield* call("PUT", path, { token, body: { name: "renamed" } })
        expect(renamed.status).toBe(200)
        expect(renamed.body).toMatchObject({ name: "renamed", language: "typescript", description: null })
        const resent = yield* call("PUT", path, { token, body: { code: typescript, description: "typed" } })
        expect(resent.status).toBe(200)
        expect(resent.body).toMatchObject({ name: "renamed", language: "typescript", description: "typed" })
        const cleared = yield* call("PUT", path, { token, body: { description: null } })
        expect(cleared.body.description).toBeNull()
        expect((yield* call("GET", path, { token })).body).toMatchObject({ code: program.code, language: "typescript" })
        expectError(yield* call("PUT", path, { token, body: { name: "" } }), 400, "invalid_input")
        expectError(yield* call("PUT", path, { token, body: { language: "javascript" } }), 422, "program_invalid")
      }))

    it.effect("a backtest whose range has no candles yet answers 422 no_market_data naming where the data ends", () =>
      Effect.gen(function*() {
        const { programId, token } = yield* withProgram(hold)
        const reply = yield* call("POST", `/api/programs/${programId}/backtest`, {
          token,
          body: { ...shortRun, start: "2030-01-01T00:00:00Z", end: "2030-02-01T00:00:00Z" }
        })
        expectError(reply, 422, "no_market_data")
        expect(reply.body.available_until).toBe(new Date(marketNow).toISOString())
        expect(reply.body.error).toContain(new Date(marketNow).toISOString())
        const history = yield* call("GET", "/api/programs/backtest/history", { token })
        expect(history.body.backtests).toEqual([])
      }))
  })
})
