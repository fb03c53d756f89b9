import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import { createProgram } from "../support/Automation.js"
import { shortRun } from "../support/Backtests.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

// 10¹² is the largest amount a request may give (packages/core/src/http/Amount.ts).
const past = 1e12 * 1.5

/** Answers 400 invalid_input naming each of `paths`, and only them. */
const refused = (
  reply: { status: number; body: any; text: string; headers: Headers },
  paths: ReadonlyArray<string>
) => {
  expectError(reply, 400, "invalid_input")
  expect(new Set(reply.body.issues.map((i: { path: string }) => i.path))).toEqual(new Set(paths))
  for (const path of paths) expect(reply.body.error).toContain(path)
}

describe("amounts in requests", () => {
  layer(TestServer(), { timeout: "120 seconds" })((it) => {
    it.effect("POST /api/account with initial_capital past 10^12 answers 400 naming it; 10^12 is accepted", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("amounts")
        for (const initial_capital of [past, 1e308]) {
          refused(yield* call("POST", "/api/account", { token, body: { name: "rich", initial_capital } }), [
            "initial_capital"
          ])
        }
        const most = yield* createAccount(token, { initial_capital: 1e12 })
        expect(most.initial_capital).toBe(1e12)
      }))

    it.effect("POST /api/programs/:id/backtest with initial_balance past 10^12 answers 400 naming it", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("amounts")
        const program = yield* createProgram(token)
        const reply = yield* call("POST", `/api/programs/${program}/backtest`, {
          token,
          body: { ...shortRun, initial_balance: past }
        })
        refused(reply, ["initial_balance"])
      }))

    it.effect("POST /api/trader/:id/import with a quantity, price, fee or realized_pnl past 10^12 answers 400 naming each", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("amounts")
        const account = yield* createAccount(token)
        const trade = { trade_time: "2025-01-01T00:05:00Z", symbol: "BTC", side: "buy", quantity: 0.1, price: 94000 }
        const body = {
          version: "1.0",
          decision_logs: [],
          trades: [
            trade,
            { ...trade, quantity: past, price: past, fee: -past, realized_pnl: past }
          ]
        }
        refused(yield* call("POST", `/api/trader/${account.id}/import`, { token, body }), [
          "trades.1.quantity",
          "trades.1.price",
          "trades.1.fee",
          "trades.1.realized_pnl"
        ])
        const most = { ...trade, quantity: 1e12, price: 1e12, fee: -1e12, realized_pnl: 1e12 }
        const accepted = yield* call("POST", `/api/trader/${account.id}/import`, {
          token,
          body: { ...body, trades: [most] }
        })
        expect(accepted.status).toBe(200)
      }))

    it.effect("POST /api/signals with a threshold past 10^12 either way answers 400 naming it", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("amounts")
        for (const threshold of [past, -past]) {
          const reply = yield* call("POST", "/api/signals", {
            token,
            body: {
              signal_name: "huge",
              trigger_condition: { metric: "volume", operator: "gt", threshold, time_window: "1h" }
            }
          })
          refused(reply, ["trigger_condition.threshold"])
        }
      }))

    it.effect("POST /api/signals/pools with a size_change_threshold over 100 answers 400 naming it", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp("amounts")
        const reply = yield* call("POST", "/api/signals/pools", {
          token,
          body: {
            pool_name: "whales",
            source_type: "wallet_tracking",
            symbols: [],
            logic: "OR",
            source_config: { addresses: [`0x${"1".repeat(40)}`], size_change_threshold: 101 }
          }
        })
        refused(reply, ["source_config.size_change_threshold"])
      }))
  })
})
