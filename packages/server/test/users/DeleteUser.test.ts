import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount, venue2Keys, wallet } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, waitForRuns } from "../support/Automation.js"
import { shortRun } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

// The columns through which a row belongs to a user, directly or through something the user owns.
const ownerColumns = {
  user_id: "users",
  account_id: "accounts",
  program_id: "programs",
  pool_id: "signal_pools",
  binding_id: "automation_bindings",
  conversation_id: "ai_conversations",
  run_id: "automation_runs"
} as const

/** Every table with an owner column, and how many of its rows belong to the user: a map of "table.column" to count. */
const rowsOf = (userId: number, ids: Readonly<Record<string, ReadonlyArray<number>>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = yield* sql<{ table_name: string; column_name: keyof typeof ownerColumns }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name IN ${sql.in(Object.keys(ownerColumns))}`
    const counts: Record<string, number> = {}
    for (const { column_name, table_name } of columns) {
      const owned = column_name === "user_id" ? [userId] : ids[ownerColumns[column_name]] ?? []
      if (owned.length === 0) continue
      const [row] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql(table_name)} WHERE ${sql(column_name)} IN ${sql.in(owned)}`
      counts[`${table_name}.${column_name}`] = row!.n
    }
    counts["users.id"] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE id = ${userId}`)[0]!.n
    return counts
  })

/** The ids of what the user owns, per owning table. */
const idsOf = (userId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Record<string, ReadonlyArray<number>> = { users: [userId] }
    for (const table of Object.values(ownerColumns)) {
      if (table === "users") continue
      const rows = table === "automation_runs"
        ? yield* sql<{ id: number }>`SELECT id FROM automation_runs WHERE user_id = ${userId}`
        : yield* sql<{ id: number }>`SELECT id FROM ${sql(table)} WHERE user_id = ${userId}`
      ids[table] = rows.map((r) => r.id)
    }
    return ids
  })

/** A user with something in every feature: accounts with venue credentials and history, programs, backtests, signals, pools, bindings with runs, orders and positions, conversations, insights and news sources. */
const populate = (token: string) =>
  Effect.gen(function*() {
    const expectOk = <R extends { status: number; text: string }>(reply: R) => {
      expect(reply.status, reply.text).toBeLessThan(300)
      return reply
    }
    const account = yield* createAccount(token, { api_key: "sk-user-api-key" })
    expectOk(yield* call("PUT", `/api/venue1/accounts/${account.id}/wallet`, { token, body: wallet }))
    const other = yield* createAccount(token)
    expectOk(yield* call("POST", `/api/venue2/accounts/${other.id}/setup`, { token, body: venue2Keys }))
    expectOk(
      yield* call("POST", `/api/trader/${account.id}/import`, {
        token,
        body: {
          version: "1.0",
          decision_logs: [{ decision_time: "2025-01-01T00:00:00Z", symbol: "BTC", operation: "buy" }],
          trades: [{ trade_time: "2025-01-01T00:05:00Z", symbol: "BTC", side: "buy", quantity: 0.1, price: 94000 }]
        }
      })
    )
    const program = yield* createProgram(token)
    expectOk(yield* call("POST", `/api/programs/${program}/backtest`, { token, body: shortRun }))
    const signal = expectOk(
      yield* call("POST", "/api/signals", {
        token,
        body: {
          signal_name: "BTC jumps",
          trigger_condition: { metric: "price_change", operator: "gt", threshold: 2, time_window: "1h" }
        }
      })
    )
    const pool = expectOk(
      yield* call("POST", "/api/signals/pools", {
        token,
        body: { pool_name: "majors", symbols: ["BTC"], signal_ids: [signal.body.id] }
      })
    )
    const binding = expectOk(
      yield* call("POST", `/api/programs/${program}/bindings`, {
        token,
        body: { account_id: account.id, symbols: ["BTC"], interval_minutes: 1440, signal_pool_ids: [pool.body.id] }
      })
    )
    const queued = expectOk(yield* call("POST", `/api/programs/${program}/bindings/${binding.body.id}/run`, { token }))
    yield* waitForRuns(token, program, binding.body.id, allFinished(queued.body.runs.length))
    expectOk(
      yield* call("POST", "/api/ai/conversations", {
        token,
        body: { message: "How is BTC doing?", context: { symbol: "BTC", timeframe: "1h" } }
      })
    )
    expectOk(yield* call("POST", "/api/ai/insight", { token, body: { symbol: "BTC", timeframe: "1h" } }))
    expectOk(
      yield* call("POST", "/api/news/sources", {
        token,
        body: { name: "My feed", url: "https://example.com/feed.xml" }
      })
    )
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`deleting a user over ${storage.name}`, () => {
    layer(AutomationServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("DELETE /api/users/me removes the user and everything they own, and kills the token", () =>
        Effect.gen(function*() {
          const doomed = yield* signUp("doomed")
          const kept = yield* signUp("kept")
          yield* populate(doomed.token)
          yield* populate(kept.token)
          const [doomedId, keptId] = [doomed.id, kept.id]
          const doomedIds = yield* idsOf(doomedId)
          const before = yield* rowsOf(doomedId, doomedIds)
          const keptBefore = yield* rowsOf(keptId, yield* idsOf(keptId))
          // Every feature left rows behind: the check below could fail.
          for (
            const table of [
              "sessions.user_id",
              "accounts.user_id",
              "venue_credentials.account_id",
              "account_decision_logs.account_id",
              "account_trades.account_id",
              "programs.user_id",
              "backtests.user_id",
              "signals.user_id",
              "signal_pools.user_id",
              "signal_pool_members.pool_id",
              "automation_bindings.user_id",
              "automation_runs.user_id",
              "automation_orders.account_id",
              "account_positions.account_id",
              "ai_conversations.user_id",
              "ai_messages.conversation_id",
              "ai_insights.user_id",
              "news_sources.user_id"
            ]
          ) expect(before[table], table).toBeGreaterThan(0)

          const reply = yield* call("DELETE", "/api/users/me", {
            token: doomed.token,
            body: { password: doomed.password }
          })
          expect(reply.status).toBe(204)

          const after = yield* rowsOf(doomedId, doomedIds)
          expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([])
          expect(yield* rowsOf(keptId, yield* idsOf(keptId))).toEqual(keptBefore)
          const dead = yield* call("GET", "/api/users/me", { token: doomed.token })
          expectError(dead, 401, "unauthorized")
          const login = yield* call("POST", "/api/users/login", {
            body: { email: doomed.email, password: doomed.password }
          })
          expectError(login, 401, "unauthorized")
          expect((yield* call("GET", "/api/users/me", { token: kept.token })).status).toBe(200)
        }))

      it.effect("DELETE /api/users/me with a wrong or missing password answers 401 or 400 and deletes nothing", () =>
        Effect.gen(function*() {
          const user = yield* signUp("careful")
          const account = yield* createAccount(user.token)
          const wrong = yield* call("DELETE", "/api/users/me", {
            token: user.token,
            body: { password: "not it at all" }
          })
          expectError(wrong, 401, "unauthorized")
          expect(wrong.body.reason).toBe("invalid_credentials")
          expectError(yield* call("DELETE", "/api/users/me", { token: user.token, body: {} }), 400, "invalid_input")
          expectError(
            yield* call("DELETE", "/api/users/me", { body: { password: user.password } }),
            401,
            "unauthorized"
          )
          expect((yield* call("GET", `/api/account/${account.id}`, { token: user.token })).status).toBe(200)
        }))
    })
  })
}
