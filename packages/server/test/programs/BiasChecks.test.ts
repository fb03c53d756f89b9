import { afterAll, describe, expect, layer } from "@effect/vitest"
import { fakeVenue2Keys, startFakeVenue2, testOptions, testStorages } from "@trading-platform/core/testing"
import { Duration, Effect } from "effect"
import { createAccount, venue2Keys } from "../support/Accounts.js"
import { AutomationServer } from "../support/Automation.js"
import { BacktestServer, shortRun } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

/** Long while the close is above its 30-bar mean: needs 30 bars of history, no more. */
const smaProgram = `export function decide(data) {
  if (data.candles.length < 30) return { operation: "hold" }
  const closes = data.candles.slice(-30).map((c) => c.close)
  const mean = closes.reduce((a, b) => a + b, 0) / 30
  const above = data.bar.close > mean
  if (above && !data.position) return { operation: "buy", target_portion_of_balance: 0.5 }
  if (!above && data.position) return { operation: "close" }
  return { operation: "hold" }
}
`

/** Buys at the 300th bar it is shown, warm-up included: its decisions depend on how much history it was given. */
const countingProgram = `let n = 0
export function decide(data) {
  n++
  return n === 300 ? { operation: "buy", target_portion_of_balance: 0.5 } : { operation: "hold" }
}
`

const withProgram = (code: string) =>
  Effect.gen(function*() {
    const user = yield* signUp()
    const created = yield* call("POST", "/api/programs", { token: user.token, body: { name: "Checked", code } })
    expect(created.status).toBe(201)
    return { ...user, programId: created.body.id as number }
  })

const check = (token: string, programId: number, body: Record<string, unknown> = {}) =>
  call("POST", `/api/programs/${programId}/checks`, { token, body: { ...shortRun, ...body } })

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

/** Polls the check until it has a verdict (its runs are real backtests on the real clock). */
const waitForVerdict = (token: string, programId: number, id: number, deadlineMs = 90_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const reply = yield* call("GET", `/api/programs/${programId}/checks/${id}`, { token })
      expect(reply.status).toBe(200)
      if (!["queued", "running"].includes(reply.body.status)) return reply.body
      if (Date.now() > deadline) return yield* Effect.die(new Error(`check ${id} still ${reply.body.status}`))
      yield* realPause
    }
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`bias checks over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "180 seconds" })((it) => {
      it.effect("POST /api/programs/:id/checks answers 202 with five queued backtests; an honest SMA program passes both checks", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const reply = yield* check(token, programId)
          expect(reply.status).toBe(202)
          expect(reply.body).toMatchObject({
            program_id: programId,
            status: "queued",
            current: true,
            symbol: "BTC",
            exchange: "venue1",
            timeframe: "1h",
            start: "2025-01-01T00:00:00.000Z",
            end: "2025-01-15T00:00:00.000Z",
            params: {},
            lookahead: {
              verdict: "pending",
              // 336 bars cut at a quarter, a half and three quarters.
              cuts: [
                { end: "2025-01-04T12:00:00.000Z" },
                { end: "2025-01-08T00:00:00.000Z" },
                { end: "2025-01-11T12:00:00.000Z" }
              ],
              difference: null
            },
            warmup: { verdict: "pending", warmup_bars: 200, reference_warmup_bars: 500, difference: null },
            error: null
          })
          const done = yield* waitForVerdict(token, programId, reply.body.id)
          expect(done).toMatchObject({
            status: "passed",
            lookahead: { verdict: "passed", difference: null },
            warmup: { verdict: "passed", difference: null }
          })
          // The runs are ordinary backtests of the caller, and the full one traded: the comparison was not of nothing.
          const full = yield* call("GET", `/api/programs/backtest/${done.lookahead.backtest_id}`, { token })
          expect(full.body).toMatchObject({ status: "completed", warmup_bars: 500, program_id: programId })
          expect(full.body.fills.length).toBeGreaterThan(4)
          const cut = yield* call("GET", `/api/programs/backtest/${done.lookahead.cuts[0].backtest_id}`, { token })
          expect(cut.body).toMatchObject({ end: "2025-01-04T12:00:00.000Z", warmup_bars: 500 })
          const short = yield* call("GET", `/api/programs/backtest/${done.warmup.backtest_id}`, { token })
          expect(short.body).toMatchObject({ end: "2025-01-15T00:00:00.000Z", warmup_bars: 200 })
          const list = yield* call("GET", `/api/programs/${programId}/checks`, { token })
          expect(list.status).toBe(200)
          expect(list.body.checks).toEqual([done])
        }))

      it.effect("a check one of whose runs is cancelled ends in error naming that run", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const reply = yield* check(token, programId)
          expect(reply.status).toBe(202)
          // The warm-up run is queued last: it has not started when the check is answered.
          const warmup = reply.body.warmup.backtest_id
          expect((yield* call("POST", `/api/programs/backtest/${warmup}/cancel`, { token })).status).toBe(200)
          const done = yield* waitForVerdict(token, programId, reply.body.id)
          expect(done).toMatchObject({ status: "error", error: `Backtest ${warmup} cancelled` })
        }))

      it.effect("a program whose decisions depend on the history given fails the warm-up check, naming its first fill", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(countingProgram)
          const reply = yield* check(token, programId)
          expect(reply.status).toBe(202)
          const done = yield* waitForVerdict(token, programId, reply.body.id)
          // With 500 bars before start the 300th is in the warm-up; with 200 it is the run's 100th, filled at the next open.
          expect(done).toMatchObject({
            status: "failed",
            lookahead: { verdict: "passed", difference: null },
            warmup: {
              verdict: "failed",
              difference: {
                backtest_id: done.warmup.backtest_id,
                time: "2025-01-05T04:00:00.000Z",
                expected: null,
                found: { side: "buy", symbol: "BTC", reason: "signal", time: Date.parse("2025-01-05T04:00:00Z") }
              }
            }
          })
          expect(done.warmup.difference.detail).toContain("with 200 it bought")
        }))

      it.effect("a range where the data begins gives the warm-up check nothing to compare: the check is error, saying so", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const hour = 3_600_000
          const from = Date.parse(shortRun.start)
          const csv = Array.from(
            { length: 48 },
            (_, i) => [from + i * hour, 100 + i, 101 + i, 99 + i, 100 + i, 10].join(",")
          )
          const imported = yield* call(
            "POST",
            "/api/market/candles/import?name=late&symbol=BTC&timeframe=1h&venue=venue1",
            {
              token,
              raw: `time,open,high,low,close,volume\n${csv.join("\n")}`,
              headers: { "content-type": "text/csv" }
            }
          )
          expect(imported.status).toBe(200)
          const reply = yield* check(token, programId, {
            exchange: "dataset:late",
            end: new Date(from + 48 * hour).toISOString()
          })
          expect(reply.status).toBe(202)
          const done = yield* waitForVerdict(token, programId, reply.body.id)
          expect(done).toMatchObject({
            status: "error",
            lookahead: { verdict: "passed" },
            warmup: { verdict: "error" }
          })
          expect(done.error).toContain("only 0 bars before start")
        }))

      it.effect("a check speaks for the code it ran: after the program's code changes it is no longer current", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const reply = yield* check(token, programId)
          const edited = yield* call("PUT", `/api/programs/${programId}`, {
            token,
            body: { code: smaProgram.replace("/ 30", "/ 30.0") }
          })
          expect(edited.status).toBe(200)
          const again = yield* call("GET", `/api/programs/${programId}/checks/${reply.body.id}`, { token })
          expect(again.body.current).toBe(false)
        }))

      it.effect("POST /api/programs/:id/checks with a bad range or field answers 400 invalid_input naming it", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const cases: Array<[Record<string, unknown>, string]> = [
            [{ end: "2024-12-31T00:00:00Z" }, "end"],
            // A year of hours is above the 5000 bars of a check's run.
            [{ end: "2026-01-01T00:00:00Z" }, "end"],
            [{ end: "2025-01-01T10:00:00Z" }, "end"],
            [{ warmup_bars: 500 }, "warmup_bars"],
            [{ fee_rate: 0.001 }, "fee_rate"]
          ]
          for (const [body, path] of cases) {
            const reply = yield* check(token, programId, body)
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: { path: string }) => i.path)).toContain(path)
          }
        }))

      it.effect("checks are the owner's: 401 without a token, 403 on another user's program, 404 on unknown ids", () =>
        Effect.gen(function*() {
          const owner = yield* withProgram(smaProgram)
          const other = yield* withProgram(smaProgram)
          const reply = yield* check(owner.token, owner.programId)
          expect(reply.status).toBe(202)
          const id = reply.body.id
          expectError(
            yield* call("POST", `/api/programs/${owner.programId}/checks`, { body: shortRun }),
            401,
            "unauthorized"
          )
          expectError(yield* check(other.token, owner.programId), 403, "forbidden")
          expectError(
            yield* call("GET", `/api/programs/${owner.programId}/checks`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("GET", `/api/programs/${owner.programId}/checks/${id}`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(yield* check(owner.token, 999_999), 404, "not_found")
          expectError(
            yield* call("GET", `/api/programs/${owner.programId}/checks/999999`, { token: owner.token }),
            404,
            "not_found"
          )
          // A check is found under its own program only.
          const second = yield* call("POST", "/api/programs", {
            token: owner.token,
            body: { name: "Second", code: smaProgram }
          })
          expectError(
            yield* call("GET", `/api/programs/${second.body.id}/checks/${id}`, { token: owner.token }),
            404,
            "not_found"
          )
        }))
    })
  })
}

// A venue that is not simulated: venue2 in http mode against a local fake, one per storage.
const fakes = await Promise.all(testStorages.map(() => startFakeVenue2()))
afterAll(async () => {
  for (const fake of fakes) await fake.close()
})

const liveServer = (storage: (typeof testStorages)[number], i: number, requireBiasCheck: boolean) =>
  AutomationServer(storage, { requireBiasCheck }, {
    venues: {
      ...testOptions({ kind: "pglite", dataDir: "memory://" }).venues,
      venue2: { mode: "http", baseUrl: fakes[i]!.url, timeout: Duration.seconds(1), retries: 1 }
    },
    backtests: { concurrency: 2, pollInterval: Duration.seconds(1), lease: Duration.seconds(30), maxAttempts: 3 }
  })

/** An account whose orders go to venue2 (its keys stored), and one that trades on paper. */
const accounts = (token: string) =>
  Effect.gen(function*() {
    const live = yield* createAccount(token, { name: "live" })
    const setup = yield* call("POST", `/api/venue2/accounts/${live.id}/setup`, {
      token,
      body: { ...venue2Keys, ...fakeVenue2Keys() }
    })
    expect(setup.status).toBe(200)
    return { live: live.id as number, paper: (yield* createAccount(token, { name: "paper" })).id as number }
  })

const bind = (token: string, programId: number, accountId: number, enabled = true) =>
  call("POST", `/api/programs/${programId}/bindings`, {
    token,
    body: { account_id: accountId, symbols: ["BTC"], interval_minutes: 1440, enabled }
  })

for (const [i, storage] of testStorages.entries()) {
  describe.skipIf(!storage.available)(`the bias check a live binding needs, over ${storage.name}`, () => {
    layer(liveServer(storage, i, true), { timeout: "180 seconds" })((it) => {
      it.effect("a binding trading on a venue that is not simulated answers 422 bias_check_required until a check of the program's current code has passed", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const { live, paper } = yield* accounts(token)
          const refused = yield* bind(token, programId, live)
          expectError(refused, 422, "bias_check_required")
          expect(refused.body.program_id).toBe(programId)
          // Paper trading, and a disabled binding, are not live.
          expect((yield* bind(token, programId, paper)).status).toBe(201)
          const disabled = yield* bind(token, programId, live, false)
          expect(disabled.status).toBe(201)
          const path = `/api/programs/${programId}/bindings/${disabled.body.id}`
          expectError(yield* call("PUT", path, { token, body: { enabled: true } }), 422, "bias_check_required")
          expectError(yield* call("POST", `${path}/run`, { token }), 422, "bias_check_required")
          // A failed check does not count.
          const counting = yield* call("PUT", `/api/programs/${programId}`, { token, body: { code: countingProgram } })
          expect(counting.status).toBe(200)
          const failed = yield* check(token, programId)
          expect((yield* waitForVerdict(token, programId, failed.body.id)).status).toBe("failed")
          expectError(yield* bind(token, programId, live), 422, "bias_check_required")
          // A passed check of the current code lets it go live.
          expect((yield* call("PUT", `/api/programs/${programId}`, { token, body: { code: smaProgram } })).status)
            .toBe(200)
          const passed = yield* check(token, programId)
          expect((yield* waitForVerdict(token, programId, passed.body.id)).status).toBe("passed")
          expect((yield* bind(token, programId, live)).status).toBe(201)
          expect((yield* call("PUT", path, { token, body: { enabled: true } })).status).toBe(200)
          // Editing the code takes the check away from it.
          const edited = yield* call("PUT", `/api/programs/${programId}`, {
            token,
            body: { code: smaProgram.replace("/ 30", "/ 30.0") }
          })
          expect(edited.status).toBe(200)
          expectError(yield* bind(token, programId, live), 422, "bias_check_required")
        }))
    })

    layer(liveServer(storage, i, false), { timeout: "60 seconds" })((it) => {
      it.effect("REQUIRE_BIAS_CHECK=false waives the rule: a live binding without a check is created", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(smaProgram)
          const { live } = yield* accounts(token)
          expect((yield* bind(token, programId, live)).status).toBe(201)
        }))
    })
  })
}
