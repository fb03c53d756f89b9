import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const issuesOf = (reply: { body: any }) => reply.body.issues.map((i: any) => i.path)
const json = { "content-type": "application/json" }

layer(TestServer())("a strict contract", (it) => {
  it.effect("an id beyond what storage holds, in a path, a query or a body, answers 400 naming it; the largest one 404", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp("ids")
      const tooLarge = "2147483648"
      const path = yield* call("GET", `/api/account/${tooLarge}`, { token })
      expectError(path, 400, "invalid_input")
      expect(issuesOf(path)).toEqual(["account_id"])
      expectError(yield* call("GET", "/api/account/2147483647", { token }), 404, "not_found")
      expectError(yield* call("GET", "/api/account/99999999999999999999", { token }), 400, "invalid_input")

      const query = yield* call("GET", `/api/programs/backtest/history?program_id=${tooLarge}`, { token })
      expectError(query, 400, "invalid_input")
      expect(issuesOf(query)).toEqual(["program_id"])
      const offset = yield* call("GET", "/api/programs?offset=99999999999999999999", { token })
      expectError(offset, 400, "invalid_input")
      expect(issuesOf(offset)).toEqual(["offset"])

      const program = yield* call("POST", "/api/programs", {
        token,
        body: { name: "p", code: "export function decide() { return { operation: \"hold\" } }" }
      })
      const body = yield* call("POST", `/api/programs/${program.body.id}/bindings`, {
        token,
        body: { account_id: Number(tooLarge), symbols: ["BTC"], signal_pool_ids: [1, 2 ** 53 - 1] }
      })
      expectError(body, 400, "invalid_input")
      expect(issuesOf(body)).toEqual(expect.arrayContaining(["account_id", "signal_pool_ids.1"]))
      const account = yield* createAccount(token)
      const avatar = yield* call("PUT", `/api/account/${account.id}`, { token, body: { avatar_preset_id: 2 ** 31 } })
      expectError(avatar, 400, "invalid_input")
      expect(issuesOf(avatar)).toEqual(["avatar_preset_id"])
    }))

  it.effect("a NUL or an unpaired surrogate in a body field, a key, a query or a path parameter answers 400 naming the field", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp("text")
      for (const raw of ["{\"name\":\"a\\u0000b\"}", "{\"name\":\"\\ud800\"}", "{\"name\":\"x\\uDC00y\"}"]) {
        const reply = yield* call("POST", "/api/account", { token, raw, headers: json })
        expectError(reply, 400, "invalid_input")
        expect(reply.body.issues).toEqual([{
          path: "name",
          message: "must not contain a NUL character or an unpaired surrogate"
        }])
      }
      // A pair is a character like any other, and so is an escaped backslash before "u0000".
      expect(
        (yield* call("POST", "/api/account", { token, headers: json, raw: "{\"name\":\"\\ud83d\\udca5\"}" })).body.name
      ).toBe("💥")
      expect(
        (yield* call("POST", "/api/account", { token, headers: json, raw: "{\"name\":\"a\\\\u0000\"}" })).body.name
      ).toBe(
        "a\\u0000"
      )
      const key = yield* call("POST", "/api/account", { token, headers: json, raw: "{\"name\":\"n\",\"k\\u0000\":1}" })
      expectError(key, 400, "invalid_input")
      expect(issuesOf(key)).toEqual(["k\u0000"])
      const query = yield* call("GET", "/api/news?symbol=BT%00C", { token })
      expectError(query, 400, "invalid_input")
      expect(issuesOf(query)).toEqual(["symbol"])
      const param = yield* call("GET", "/api/ai/insight/a%00b", { token })
      expectError(param, 400, "invalid_input")
      expect(issuesOf(param)).toEqual(["task_id"])
    }))

  it.effect("an unknown body field answers 400 naming it and changes nothing, at the top and nested", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp("fields")
      const program = yield* call("POST", "/api/programs", {
        token,
        body: { name: "kept", code: "export function decide() { return { operation: \"hold\" } }" }
      })
      const misspelt = yield* call("PUT", `/api/programs/${program.body.id}`, { token, body: { nmae: "x" } })
      expectError(misspelt, 400, "invalid_input")
      expect(misspelt.body.issues).toEqual([{
        path: "nmae",
        message: "is not a known field; the known fields are code, name, description, language"
      }])
      expect((yield* call("GET", `/api/programs/${program.body.id}`, { token })).body.name).toBe("kept")
      const inner = yield* call("POST", `/api/programs/${program.body.id}/backtest`, {
        token,
        body: {
          symbol: "BTC",
          timeframe: "1h",
          start: "2025-01-01T00:00:00Z",
          end: "2025-01-02T00:00:00Z",
          extra: true
        }
      })
      expectError(inner, 400, "invalid_input")
      expect(issuesOf(inner)).toEqual(["extra"])
    }))

  it.effect("a known path with a wrong method answers 405 with Allow; an unknown path 404", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp("methods")
      const login = yield* call("GET", "/api/users/login")
      expectError(login, 405, "method_not_allowed")
      expect(login.headers.get("allow")).toBe("POST")
      const account = yield* call("PATCH", "/api/account/1", { token, body: {} })
      expectError(account, 405, "method_not_allowed")
      expect(account.headers.get("allow")?.split(", ").sort()).toEqual(["DELETE", "GET", "PUT"])
      expectError(yield* call("GET", "/api/nothing/here", { token }), 404, "not_found")
    }))
})
