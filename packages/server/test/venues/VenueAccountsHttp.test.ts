import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount, venue2Keys, wallet } from "../support/Accounts.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`venue connections over ${storage.name} (simulated venues)`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("PUT wallet then POST wallet/test answers success, latency and the account's model", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("wallet")
          const account = yield* createAccount(token, { model: "gpt-x" })
          const path = `/api/venue1/accounts/${account.id}/wallet`
          const stored = yield* call("PUT", path, { token, body: wallet })
          expect(stored.status).toBe(200)
          expect(stored.body.status).toBe("success")
          expect(stored.text).not.toContain(wallet.private_key)
          const test = yield* call("POST", `${path}/test`, { token })
          expect(test.status).toBe(200)
          expect(test.body).toMatchObject({ success: true, model: "gpt-x" })
          expect(typeof test.body.latency_ms).toBe("number")
          expect(test.body.latency_ms).toBeGreaterThanOrEqual(0)
          expect(test.text).not.toContain(wallet.private_key)
        }))

      it.effect("wallet/test before a wallet is stored answers 404; a bad wallet body 400", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("wallet")
          const account = yield* createAccount(token)
          const path = `/api/venue1/accounts/${account.id}/wallet`
          expectError(yield* call("POST", `${path}/test`, { token }), 404, "not_found")
          const bad = yield* call("PUT", path, {
            token,
            body: { ...wallet, private_key: "0x1234", environment: "moon" }
          })
          expectError(bad, 400, "invalid_input")
          expect(new Set(bad.body.issues.map((i: { path: string }) => i.path))).toEqual(
            new Set(["environment", "private_key"])
          )
        }))

      it.effect("venue endpoints on another user's account answer 403, on an unknown one 404, without a token 401", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const account = yield* createAccount(alice.token)
          const calls = (id: number, token?: string) => [
            call("PUT", `/api/venue1/accounts/${id}/wallet`, { ...(token ? { token } : {}), body: wallet }),
            call("POST", `/api/venue1/accounts/${id}/wallet/test`, token ? { token } : {}),
            call("POST", `/api/venue2/accounts/${id}/setup`, { ...(token ? { token } : {}), body: venue2Keys })
          ]
          for (const reply of yield* Effect.all(calls(account.id, bob.token))) expectError(reply, 403, "forbidden")
          for (const reply of yield* Effect.all(calls(999_999, alice.token))) expectError(reply, 404, "not_found")
          for (const reply of yield* Effect.all(calls(account.id))) expectError(reply, 401, "unauthorized")
        }))

      it.effect("POST venue2 setup checks the keys, stores them and applies the leverage", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("venue2")
          const account = yield* createAccount(token)
          const reply = yield* call("POST", `/api/venue2/accounts/${account.id}/setup`, {
            token,
            body: { ...venue2Keys, max_leverage: 100, default_leverage: 10 }
          })
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({
            status: "success",
            message: `venue2 keys accepted and stored for account ${account.id}`
          })
          expect(reply.text).not.toContain(venue2Keys.secret_key)
          const after = yield* call("GET", `/api/account/${account.id}`, { token })
          expect(after.body).toMatchObject({ max_leverage: 100, default_leverage: 10 })
        }))

      it.effect("venue2 setup with malformed keys answers 400 naming the rule, with leverage over 125 422 leverage_too_high", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("venue2")
          const account = yield* createAccount(token)
          const path = `/api/venue2/accounts/${account.id}/setup`
          const short = yield* call("POST", path, { token, body: { ...venue2Keys, secret_key: "short!" } })
          expectError(short, 400, "invalid_input")
          expect(short.body.issues).toEqual([{ path: "secret_key", message: "must be 16 to 128 letters and digits" }])
          expect(short.text).not.toContain("short!")
          expectError(
            yield* call("POST", path, { token, body: { ...venue2Keys, max_leverage: 126 } }),
            422,
            "leverage_too_high"
          )
          expectError(yield* call("POST", path, { token, body: { api_key: "x" } }), 400, "invalid_input")
          const longSecret = yield* call("POST", path, { token, body: { ...venue2Keys, secret_key: "S".repeat(300) } })
          expectError(longSecret, 400, "invalid_input")
          expect(longSecret.text).not.toContain("S".repeat(100))
          const after = yield* call("GET", `/api/account/${account.id}`, { token })
          expect(after.body).toMatchObject({ max_leverage: null, has_venue2_keys: false })
        }))

      it.effect("a malformed wallet answers 400 naming each rule", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("wallet")
          const account = yield* createAccount(token)
          const bad = yield* call("PUT", `/api/venue1/accounts/${account.id}/wallet`, {
            token,
            body: { ...wallet, wallet_address: "0x12", private_key: "0xnothex" }
          })
          expectError(bad, 400, "invalid_input")
          expect(bad.body.issues).toEqual([
            { path: "wallet_address", message: "must be 0x and 40 hex digits" },
            { path: "private_key", message: "must be 0x and 64 hex digits" }
          ])
          expect(bad.text).not.toContain("0xnothex")
        }))

      it.effect("the account shows which venues are set up and the wallet's environment, never the secrets", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("flags")
          const account = yield* createAccount(token)
          expect(account).toMatchObject({ has_venue1_wallet: false, has_venue2_keys: false, venue1_environment: null })
          const walletReply = yield* call("PUT", `/api/venue1/accounts/${account.id}/wallet`, {
            token,
            body: { ...wallet, environment: "mainnet" }
          })
          expect(walletReply.status).toBe(200)
          const withWallet = yield* call("GET", `/api/account/${account.id}`, { token })
          expect(withWallet.body).toMatchObject({
            has_venue1_wallet: true,
            has_venue2_keys: false,
            venue1_environment: "mainnet"
          })
          const keysReply = yield* call("POST", `/api/venue2/accounts/${account.id}/setup`, { token, body: venue2Keys })
          expect(keysReply.status).toBe(200)
          const replies = [
            walletReply,
            keysReply,
            yield* call("GET", `/api/account/${account.id}`, { token }),
            yield* call("GET", "/api/account/list", { token }),
            yield* call("PUT", `/api/account/${account.id}`, { token, body: { name: "renamed" } }),
            yield* call("POST", `/api/venue1/accounts/${account.id}/wallet/test`, { token })
          ]
          expect(replies[2]!.body).toMatchObject({ has_venue1_wallet: true, has_venue2_keys: true })
          expect(replies[3]!.body[0]).toMatchObject({ has_venue1_wallet: true, has_venue2_keys: true })
          expect(replies[4]!.body).toMatchObject({ has_venue1_wallet: true, has_venue2_keys: true })
          for (const reply of replies) {
            for (const secret of [wallet.private_key, venue2Keys.api_key, venue2Keys.secret_key]) {
              expect(reply.text).not.toContain(secret)
            }
          }
        }))

      it.effect("the API reference states the credential rules", () =>
        Effect.gen(function*() {
          const spec = (yield* call("GET", "/openapi.json")).body
          const schemaOf = (path: string, method: string) =>
            spec.paths[path][method].requestBody.content["application/json"].schema
          const venue2 = schemaOf("/api/venue2/accounts/{account_id}/setup", "post").properties
          expect(venue2.secret_key).toMatchObject({
            pattern: "^[A-Za-z0-9]{16,128}$",
            description: expect.stringContaining("16 to 128 letters and digits")
          })
          const venue1 = schemaOf("/api/venue1/accounts/{account_id}/wallet", "put").properties
          expect(venue1.private_key).toMatchObject({
            pattern: "^0x[0-9a-fA-F]{64}$",
            description: expect.stringContaining("0x and 64 hex digits")
          })
        }))
    })
  })
}
