import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import { call, expectError, signUp, TestServer, uniqueUser } from "../support/TestServer.js"

// The operator: a user whose e-mail OPERATOR_EMAILS names (in another case, which does not matter).
const operator = uniqueUser("ops")

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`storage stats over ${storage.name}`, () => {
    const config = { operatorEmails: [operator.email.toUpperCase(), "nobody@example.com"] }
    layer(TestServer({ storage, config }), { timeout: "60 seconds" })((it) => {
      const signUpOperator = Effect.gen(function*() {
        expect((yield* call("POST", "/api/users/register", { body: operator })).status).toBe(201)
        const login = yield* call("POST", "/api/users/login", {
          body: { email: operator.email, password: operator.password }
        })
        return login.body.session_token as string
      })

      it.effect("GET /api/system/storage-stats by an operator gives every table's estimated rows and size from the catalog", () =>
        Effect.gen(function*() {
          const { token: userToken } = yield* signUp()
          const token = yield* signUpOperator
          const before = (yield* call("GET", "/api/system/storage-stats", { token })).body
          yield* createAccount(userToken)
          yield* createAccount(token)
          // Rows are the statistics' estimates, which follow the writes within a second or two.
          let reply = yield* call("GET", "/api/system/storage-stats", { token })
          while (reply.body.tables.accounts.rows < before.tables.accounts.rows + 2) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
            reply = yield* call("GET", "/api/system/storage-stats", { token })
          }
          expect(reply.status).toBe(200)
          const { tables, total_rows, total_size_mb } = reply.body
          for (
            const name of [
              "users",
              "sessions",
              "accounts",
              "programs",
              "backtests",
              "automation_bindings",
              "automation_runs",
              "automation_orders",
              "account_positions"
            ]
          ) {
            expect(tables[name]).toEqual({ rows: expect.any(Number), size_mb: expect.any(Number) })
          }
          expect(tables.accounts.rows).toBe(before.tables.accounts.rows + 2)
          expect(tables.users.rows).toBeGreaterThanOrEqual(1)
          expect(tables.accounts.size_mb).toBeGreaterThan(0)
          const values = Object.values(tables) as Array<{ rows: number; size_mb: number }>
          expect(total_rows).toBe(values.reduce((sum, t) => sum + t.rows, 0))
          expect(total_size_mb).toBeCloseTo(values.reduce((sum, t) => sum + t.size_mb, 0), 1)
          expect(total_size_mb).toBeGreaterThan(0)
        }))

      it.effect("GET /api/system/storage-stats by a user who is not an operator answers 403 forbidden", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const reply = yield* call("GET", "/api/system/storage-stats", { token })
          expectError(reply, 403, "forbidden")
          expect(reply.body.error).toMatch(/operator/)
          expect(reply.body.tables).toBeUndefined()
        }))

      it.effect("GET /api/system/storage-stats without a token answers 401", () =>
        Effect.gen(function*() {
          expectError(yield* call("GET", "/api/system/storage-stats"), 401, "unauthorized")
          expectError(yield* call("GET", "/api/system/storage-stats", { token: "not-a-token" }), 401, "unauthorized")
        }))
    })
  })
}
