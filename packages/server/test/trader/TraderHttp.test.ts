import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const history = {
  version: "1.0",
  exported_at: "2026-02-01T00:00:00.000Z",
  account: { id: 424242, name: "elsewhere" },
  decision_logs: [
    {
      decision_time: "2026-01-05T10:00:00Z",
      symbol: "BTC",
      operation: "buy",
      target_portion_of_balance: 0.25,
      leverage: 3,
      reason: "breakout"
    },
    { decision_time: "2026-01-05T11:00:00.000Z", symbol: "BTC", operation: "hold" }
  ],
  trades: [
    { trade_time: "2026-01-05T10:00:01Z", symbol: "BTC", side: "buy", quantity: 0.05, price: 65000.5, fee: 1.14 },
    {
      trade_time: "2026-01-05T10:00:01Z",
      symbol: "BTC",
      side: "sell",
      quantity: 0.05,
      price: 65100,
      realized_pnl: 4.97
    }
  ]
}

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`trader export and import over ${storage.name}`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("preview counts what an import adds, import applies it, and export gives it back", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("trader")
          const account = yield* createAccount(token, { name: "target" })
          const base = `/api/trader/${account.id}`
          const preview = yield* call("POST", `${base}/import/preview`, { token, body: history })
          expect(preview.status).toBe(200)
          expect(preview.body).toEqual({
            will_import: { decision_logs: 2, trades: 2 },
            will_skip: { count: 0, details: [] },
            warnings: [`The document was exported from account 424242; it goes into account ${account.id}`],
            target_account: { id: account.id, name: "target" }
          })
          // A preview changes nothing.
          expect((yield* call("GET", `${base}/export`, { token })).body.trades).toEqual([])
          const imported = yield* call("POST", `${base}/import`, { token, body: history })
          expect(imported.status).toBe(200)
          expect(imported.body).toMatchObject({ imported: { decision_logs: 2, trades: 2 }, skipped: { count: 0 } })
          const exported = yield* call("GET", `${base}/export`, { token })
          expect(exported.status).toBe(200)
          expect(exported.body).toMatchObject({
            version: "1.0",
            exported_at: new Date(yield* TestClock.currentTimeMillis).toISOString()
          })
          expect(exported.body.account).toEqual((yield* call("GET", `/api/account/${account.id}`, { token })).body)
          expect(exported.body.decision_logs).toEqual([
            { ...history.decision_logs[0], decision_time: "2026-01-05T10:00:00.000Z" },
            { ...history.decision_logs[1], target_portion_of_balance: null, leverage: null, reason: null }
          ])
          expect(exported.body.trades).toEqual([
            { ...history.trades[0], trade_time: "2026-01-05T10:00:01.000Z", realized_pnl: null },
            { ...history.trades[1], trade_time: "2026-01-05T10:00:01.000Z", fee: null }
          ])
        }))

      it.effect("the largest import (10,000 rows, past one statement's parameters) is stored in full; the export streams many pages back in key order", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("bulk")
          const account = yield* createAccount(token, { name: "bulk" })
          const base = `/api/trader/${account.id}`
          const hour = 3_600_000
          const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * hour).toISOString()
          // Written newest first: the export answers in time order whatever order rows came in.
          const decision_logs = Array.from({ length: 10_000 }, (_, i) => ({
            decision_time: at(9_999 - i),
            symbol: "BTC",
            operation: "hold"
          }))
          const imported = yield* call("POST", `${base}/import`, {
            token,
            body: { version: "1.0", decision_logs, trades: [] }
          })
          expect(imported.status).toBe(200)
          expect(imported.body.imported).toEqual({ decision_logs: 10_000, trades: 0 })
          const trades = Array.from({ length: 2_500 }, (_, i) => ({
            trade_time: at(i),
            symbol: i % 2 === 0 ? "BTC" : "ETH",
            side: "buy",
            quantity: 1,
            price: 100 + i,
            fee: null,
            realized_pnl: null
          }))
          expect(
            (yield* call("POST", `${base}/import`, { token, body: { version: "1.0", decision_logs: [], trades } }))
              .status
          )
            .toBe(200)
          const exported = yield* call("GET", `${base}/export`, { token })
          expect(exported.headers.get("content-type")).toMatch(/^application\/json/)
          expect(exported.body.decision_logs).toEqual(
            [...decision_logs].reverse().map((l) => ({
              ...l,
              target_portion_of_balance: null,
              leverage: null,
              reason: null
            }))
          )
          expect(exported.body.trades).toEqual(trades)
          // Again: every row is skipped, read back by the document's span rather than the whole history.
          const again = yield* call("POST", `${base}/import/preview`, {
            token,
            body: { version: "1.0", decision_logs: decision_logs.slice(0, 1_000), trades }
          })
          expect(again.body.will_import).toEqual({ decision_logs: 0, trades: 0 })
          expect(again.body.will_skip.count).toBe(3_500)
        }))

      it.effect("an export imported again is skipped entirely, and repeats inside a document are skipped", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("trader")
          const account = yield* createAccount(token)
          const base = `/api/trader/${account.id}`
          yield* call("POST", `${base}/import`, { token, body: history })
          const exported = (yield* call("GET", `${base}/export`, { token })).body
          const again = yield* call("POST", `${base}/import/preview`, { token, body: exported })
          expect(again.body.will_import).toEqual({ decision_logs: 0, trades: 0 })
          expect(again.body.will_skip.count).toBe(4)
          expect(again.body.will_skip.details).toContain("trade 2026-01-05T10:00:01.000Z BTC sell: already recorded")
          expect(again.body.warnings).toEqual([])
          const other = yield* createAccount(token)
          const repeated = { ...history, trades: [...history.trades, { ...history.trades[0], price: 1 }] }
          const reply = yield* call("POST", `/api/trader/${other.id}/import`, { token, body: repeated })
          expect(reply.body.imported).toEqual({ decision_logs: 2, trades: 2 })
          expect(reply.body.skipped).toEqual({
            count: 1,
            details: ["trade 2026-01-05T10:00:01.000Z BTC buy: repeated in the document"]
          })
          const stored = (yield* call("GET", `/api/trader/${other.id}/export`, { token })).body.trades
          expect(stored.map((t: { price: number }) => t.price)).toEqual([65000.5, 65100])
        }))

      it.effect("another version or a malformed row answers 400; another user's account 403; unknown 404; no token 401", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const bob = yield* signUp("bob")
          const account = yield* createAccount(alice.token)
          const base = `/api/trader/${account.id}`
          expectError(
            yield* call("POST", `${base}/import`, { token: alice.token, body: { ...history, version: "2.0" } }),
            400,
            "invalid_input"
          )
          const badRow = { ...history, trades: [{ ...history.trades[0], side: "long", trade_time: "yesterday" }] }
          const bad = yield* call("POST", `${base}/import/preview`, { token: alice.token, body: badRow })
          expectError(bad, 400, "invalid_input")
          expect(new Set(bad.body.issues.map((i: { path: string }) => i.path))).toEqual(
            new Set(["trades.0.trade_time", "trades.0.side"])
          )
          expectError(yield* call("GET", `${base}/export`, { token: bob.token }), 403, "forbidden")
          expectError(yield* call("POST", `${base}/import`, { token: bob.token, body: history }), 403, "forbidden")
          expectError(
            yield* call("POST", `${base}/import/preview`, { token: bob.token, body: history }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/trader/999999/export", { token: alice.token }), 404, "not_found")
          expectError(yield* call("GET", `${base}/export`), 401, "unauthorized")
          expect((yield* call("GET", `${base}/export`, { token: alice.token })).body.trades).toEqual([])
        }))
    })
  })
}
