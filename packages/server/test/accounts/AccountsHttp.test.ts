import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`accounts over ${storage.name}`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/account answers 201 with the documented defaults and never the api key", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const reply = yield* call("POST", "/api/account", {
            token: alice.token,
            body: { name: "  Grid  ", api_key: "sk-very-secret-api-key", model: "gpt-x" }
          })
          expect(reply.status).toBe(201)
          const now = new Date(yield* TestClock.currentTimeMillis).toISOString()
          expect(reply.body).toEqual({
            id: reply.body.id,
            user_id: alice.id,
            name: "Grid",
            account_type: "AI",
            initial_capital: 10000,
            current_cash: 10000,
            frozen_cash: 0,
            is_active: true,
            show_on_dashboard: true,
            venue1_enabled: false,
            avatar_preset_id: null,
            base_url: null,
            model: "gpt-x",
            default_leverage: null,
            max_leverage: null,
            venue1_environment: null,
            margin_mode: "isolated",
            has_api_key: true,
            has_venue1_wallet: false,
            has_venue2_keys: false,
            created_at: now,
            updated_at: now
          })
          expect(reply.text).not.toContain("sk-very-secret-api-key")
        }))

      it.effect("GET /api/account/list answers a JSON array of the caller's accounts only", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const first = yield* createAccount(alice.token, {
            name: "first",
            account_type: "MANUAL",
            initial_capital: 2500.5
          })
          const second = yield* createAccount(alice.token, { name: "second" })
          yield* createAccount(bob.token)
          const reply = yield* call("GET", "/api/account/list", { token: alice.token })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual([first, second])
          expect(first).toMatchObject({ account_type: "MANUAL", initial_capital: 2500.5, current_cash: 2500.5 })
          const paged = yield* call("GET", "/api/account/list?limit=1&offset=1", { token: alice.token })
          expect(paged.body).toEqual([second])
        }))

      it.effect("GET /api/account/:id answers the account; another user's 403, an unknown id 404", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const account = yield* createAccount(alice.token)
          const reply = yield* call("GET", `/api/account/${account.id}`, { token: alice.token })
          expect(reply.body).toEqual(account)
          expectError(yield* call("GET", `/api/account/${account.id}`, { token: bob.token }), 403, "forbidden")
          expectError(yield* call("GET", "/api/account/999999", { token: alice.token }), 404, "not_found")
          expectError(yield* call("GET", "/api/account/abc", { token: alice.token }), 400, "invalid_input")
        }))

      it.effect("PUT /api/account/:id changes the given fields, keeps absent ones and clears nulls", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const account = yield* createAccount(alice.token, {
            model: "m1",
            base_url: "https://llm.example",
            api_key: "k-1"
          })
          yield* TestClock.adjust("1 minute")
          const reply = yield* call("PUT", `/api/account/${account.id}`, {
            token: alice.token,
            body: {
              name: "Renamed",
              model: null,
              api_key: null,
              default_leverage: 5,
              max_leverage: 20,
              is_active: false,
              venue1_enabled: true,
              venue1_environment: "testnet",
              avatar_preset_id: 3,
              margin_mode: "cross"
            }
          })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({
            ...account,
            name: "Renamed",
            model: null,
            has_api_key: false,
            default_leverage: 5,
            max_leverage: 20,
            is_active: false,
            venue1_enabled: true,
            venue1_environment: "testnet",
            avatar_preset_id: 3,
            margin_mode: "cross",
            updated_at: new Date(Date.parse(account.updated_at) + 60_000).toISOString()
          })
          const nameNull = yield* call("PUT", `/api/account/${account.id}`, {
            token: alice.token,
            body: { name: null }
          })
          expect(nameNull.body.name).toBe("Renamed")
          expect(nameNull.body.base_url).toBe("https://llm.example")
        }))

      it.effect("leverage outside 1 <= default <= max <= venue cap answers 422 leverage_too_high", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          expectError(
            yield* call("POST", "/api/account", { token: alice.token, body: { name: "x", max_leverage: 126 } }),
            422,
            "leverage_too_high"
          )
          expectError(
            yield* call("POST", "/api/account", { token: alice.token, body: { name: "x", default_leverage: 0 } }),
            422,
            "leverage_too_high"
          )
          const account = yield* createAccount(alice.token, { max_leverage: 100 })
          const put = (body: unknown) => call("PUT", `/api/account/${account.id}`, { token: alice.token, body })
          // venue1 caps leverage at 50, venue2 at 125.
          expectError(yield* put({ venue1_enabled: true }), 422, "leverage_too_high")
          expectError(yield* put({ default_leverage: 101 }), 422, "leverage_too_high")
          expect((yield* put({ venue1_enabled: true, max_leverage: 50, default_leverage: 50 })).status).toBe(200)
          const unchanged = yield* call("GET", `/api/account/${account.id}`, { token: alice.token })
          expect(unchanged.body).toMatchObject({ venue1_enabled: true, max_leverage: 50, default_leverage: 50 })
        }))

      it.effect("PUT by another user answers 403, an unknown id 404, a bad body 400", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const account = yield* createAccount(alice.token)
          const path = `/api/account/${account.id}`
          expectError(yield* call("PUT", path, { token: bob.token, body: { name: "mine" } }), 403, "forbidden")
          expectError(yield* call("PUT", "/api/account/999999", { token: alice.token, body: {} }), 404, "not_found")
          expectError(yield* call("PUT", path, { token: alice.token, body: { name: "" } }), 400, "invalid_input")
          expectError(
            yield* call("PUT", path, { token: alice.token, body: { venue1_environment: "moon" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("PUT", path, { token: alice.token, body: { max_leverage: 2.5 } }),
            400,
            "invalid_input"
          )
          const kept = yield* call("GET", path, { token: alice.token })
          expect(kept.body).toEqual(account)
        }))

      it.effect("POST /api/account with a missing name or a wrong type answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          expectError(yield* call("POST", "/api/account", { token: alice.token, body: {} }), 400, "invalid_input")
          const wrong = yield* call("POST", "/api/account", {
            token: alice.token,
            body: { name: "x", account_type: "ROBOT", initial_capital: -1, margin_mode: "portfolio" }
          })
          expectError(wrong, 400, "invalid_input")
          expect(new Set(wrong.body.issues.map((i: { path: string }) => i.path))).toEqual(
            new Set(["account_type", "initial_capital", "margin_mode"])
          )
          // An over-long api key is refused without being echoed.
          const longKey = `sk-${"s".repeat(3000)}`
          const long = yield* call("POST", "/api/account", {
            token: alice.token,
            body: { name: "x", api_key: longKey }
          })
          expectError(long, 400, "invalid_input")
          expect(long.text).not.toContain("s".repeat(100))
        }))

      it.effect("DELETE /api/account/:id answers 204 and the account is gone; another user's 403", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const account = yield* createAccount(alice.token)
          const path = `/api/account/${account.id}`
          expectError(yield* call("DELETE", path, { token: bob.token }), 403, "forbidden")
          expect((yield* call("DELETE", path, { token: alice.token })).status).toBe(204)
          expectError(yield* call("GET", path, { token: alice.token }), 404, "not_found")
          expectError(yield* call("DELETE", path, { token: alice.token }), 404, "not_found")
        }))

      it.effect("every account endpoint without a token answers 401 unauthorized", () =>
        Effect.gen(function*() {
          const calls = [
            call("POST", "/api/account", { body: { name: "x" } }),
            call("GET", "/api/account/list"),
            call("GET", "/api/account/1"),
            call("PUT", "/api/account/1", { body: { name: "x" } }),
            call("DELETE", "/api/account/1")
          ]
          for (const reply of yield* Effect.all(calls)) expectError(reply, 401, "unauthorized")
        }))
    })
  })
}
