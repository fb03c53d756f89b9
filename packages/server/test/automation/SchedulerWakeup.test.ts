import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { waitForRounds } from "../support/AiTraders.js"
import { allFinished, AutomationServer, createProgram, waitForRuns } from "../support/Automation.js"
import { call, signUp } from "../support/TestServer.js"

const tick = TestClock.adjust("1 second")
const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** When the scheduler last passed (its lease records each pass), on the test clock. */
const lastPass = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [lease] = yield* sql<{ last_run_at: Date | null }>`
    SELECT last_run_at FROM leases WHERE name = 'automation_scheduler'`
  return lease?.last_run_at?.getTime() ?? null
}).pipe(Effect.orDie)

/** Moves the clock on a second at a time, `seconds` times, letting the server run between steps. */
const walk = (seconds: number) => Effect.repeatN(Effect.zipRight(tick, realPause), seconds - 1)

/** Waits (polling, on the wall) until the scheduler has passed at or after `at` on the clock; false after 10 s. */
const passedSince = (at: number) =>
  Effect.gen(function*() {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      const last = yield* lastPass
      if (last !== null && last >= at) return true
      yield* realPause
    }
    return false
  })

/** A new user's program bound to a new account of theirs, trading `symbol` every `minutes`. */
const bound = (symbol: string, minutes: number) =>
  Effect.gen(function*() {
    const { token } = yield* signUp()
    const program = yield* createProgram(token)
    const account = yield* createAccount(token)
    const binding = (yield* call("POST", `/api/programs/${program}/bindings`, {
      token,
      body: { account_id: account.id, symbols: [symbol], interval_minutes: minutes }
    })).body
    return { token, program, account, binding }
  })

// An hour's poll: the scheduler passes sooner only for a slot, a wake-up from the database, or
// while it watches something (every second, the default watch interval).
describe("the automation scheduler of an idle server", () => {
  layer(AutomationServer(testStorages[0]!, { pollInterval: Duration.hours(1) }), { timeout: "120 seconds" })((it) => {
    it.effect("sleeps while nothing is bound or open: no pass for two minutes of the clock", () =>
      Effect.gen(function*() {
        // Its first pass, at start.
        expect(yield* passedSince(0)).toBe(true)
        const first = yield* lastPass
        yield* walk(120)
        expect(yield* lastPass).toBe(first)
      }))

    it.effect("a binding saved while it sleeps wakes it, so the binding's first slot queues its run", () =>
      Effect.gen(function*() {
        const { binding, program, token } = yield* bound("BTC", 5)
        // Woken at the binding's commit, it passes now and then sleeps until the slot, 5 minutes on.
        expect(yield* passedSince(Date.parse(binding.created_at))).toBe(true)
        yield* TestClock.adjust("5 minutes")
        const runs = yield* waitForRuns(token, program, binding.id, allFinished(1), tick)
        expect(runs.map((r) => [r.trigger, r.status])).toEqual([["schedule", "completed"]])
      }))

    it.effect("an AI trader enabled while its scheduler sleeps wakes it, so its first slot starts a round", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp()
        const account = yield* createAccount(token)
        const set = yield* call("PUT", `/api/account/${account.id}/ai-trader`, {
          token,
          body: { enabled: true, interval_minutes: 5 }
        })
        expect(set.status).toBe(200)
        // Woken at the commit, it sleeps until the slot; without the wake-up it would sleep the hour.
        yield* Effect.repeat(realPause, { times: 20 })
        yield* TestClock.adjust("5 minutes")
        const rounds = yield* waitForRounds(token, account.id, (all) => all.length > 0, tick)
        expect(rounds[0]).toMatchObject({ trigger: "schedule" })
        yield* call("PUT", `/api/account/${account.id}/ai-trader`, { token, body: { enabled: false } })
      }))

    it.effect("an open position wakes it, and it then passes every second to watch the position's exits", () =>
      Effect.gen(function*() {
        const { account, binding, program, token } = yield* bound("ETH", 1440)
        yield* call("POST", `/api/programs/${program}/bindings/${binding.id}/run`, { token })
        yield* waitForRuns(token, program, binding.id, allFinished(1))
        const positions = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
        expect(positions.map((p: any) => p.symbol)).toEqual(["ETH"])
        for (let step = 0; step < 3; step++) {
          yield* tick
          const now = yield* TestClock.currentTimeMillis
          expect(yield* passedSince(now)).toBe(true)
        }
      }))
  })
})
