import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, waitForRuns } from "../support/Automation.js"
import { BacktestServer, isFinished, shortRun, waitForBacktest } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

/** Declares two parameters and says in its reason what it was given; buys when `side` is long. */
const declaring = `export const parameters = {
  fast: { kind: "int", min: 2, max: 50, default: 10 },
  side: { kind: "choice", choices: ["long", "flat"], default: "long" }
}
export function decide(data) {
  const reason = "params=" + JSON.stringify(data.params)
  if (data.position || data.params.side === "flat") return { operation: "hold", reason }
  return { operation: "buy", target_portion_of_balance: 0.5, reason }
}
`

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`declared parameters over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("a backtest's params are checked against the declaration, completed with defaults, stored and shown in history", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, declaring)
          const submit = (params?: unknown) =>
            call("POST", `/api/programs/${program}/backtest`, {
              token,
              body: { ...shortRun, ...(params === undefined ? {} : { params }) }
            })

          const bad = yield* submit({ fast: 51, side: "short", slow: 3 })
          expectError(bad, 400, "invalid_input")
          expect(bad.body.issues.map((i: any) => i.path)).toEqual(["params.slow", "params.fast", "params.side"])
          expect(bad.body.error).toContain("params.fast must be within 2..50")
          expectError(yield* submit([1]), 400, "invalid_input")

          const queued = yield* submit({ side: "flat" })
          expect(queued.status).toBe(202)
          expect(queued.body.params).toEqual({ fast: 10, side: "flat" })
          const done = yield* waitForBacktest(token, queued.body.id, isFinished)
          expect(done).toMatchObject({ status: "completed", params: { fast: 10, side: "flat" } })
          // `flat` holds throughout: the program read what it was given.
          expect(done.metrics.total_trades).toBe(0)
          const defaults = yield* submit()
          expect(defaults.body.params).toEqual({ fast: 10, side: "long" })
          const history = (yield* call("GET", `/api/programs/backtest/history?program_id=${program}`, { token })).body
          expect(history.backtests.map((b: any) => b.params)).toEqual([{ fast: 10, side: "long" }, {
            fast: 10,
            side: "flat"
          }])

          // Without a declaration, params pass as given.
          const free = yield* createProgram(token)
          const given = yield* call("POST", `/api/programs/${free}/backtest`, {
            token,
            body: { ...shortRun, params: { anything: [1, 2] } }
          })
          expect(given.body.params).toEqual({ anything: [1, 2] })
        }))
    })

    layer(AutomationServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("a binding's params are checked when saved, and each run completes them with the program's defaults as they are then", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, declaring)
          const account = yield* createAccount(token)
          const bind = (params: unknown) =>
            call("POST", `/api/programs/${program}/bindings`, {
              token,
              body: { account_id: account.id, symbols: ["BTC"], interval_minutes: 1440, params }
            })
          const bad = yield* bind({ fast: 1 })
          expectError(bad, 400, "invalid_input")
          expect(bad.body.issues).toEqual([{ path: "params.fast", message: "must be within 2..50" }])
          const binding = yield* bind({ fast: 20 })
          expect(binding.status).toBe(201)
          expect(binding.body.params).toEqual({ fast: 20 })
          const path = `/api/programs/${program}/bindings/${binding.body.id}`
          expectError(yield* call("PUT", path, { token, body: { params: { side: "up" } } }), 400, "invalid_input")

          const run = (count: number) =>
            Effect.gen(function*() {
              expect((yield* call("POST", `${path}/run`, { token })).status).toBe(202)
              return yield* waitForRuns(token, program, binding.body.id, allFinished(count))
            })
          const [first] = yield* run(1)
          expect(first.status).toBe("completed")
          expect(first.decision.reason).toBe(`params=${JSON.stringify({ fast: 20, side: "long" })}`)

          // The program narrows `fast`: the stored params no longer fit, and the run says why.
          const narrowed = declaring.replace("max: 50", "max: 15")
          expect((yield* call("PUT", `/api/programs/${program}`, { token, body: { code: narrowed } })).status).toBe(200)
          const [latest] = yield* run(2)
          expect(latest.status).toBe("failed")
          expect(latest.error).toContain(
            "The binding's params no longer fit the program: params.fast must be within 2..15"
          )
        }))
    })
  })
}
