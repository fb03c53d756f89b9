import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { marketNow, shortRun, tradingProgram } from "../support/Backtests.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

// No workers (the test defaults): what is queued stays queued. The simulated bars exist before `marketNow`.
const Server = TestServer({
  config: { maxQueuedJobsPerUser: 2 }
}).pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(marketNow))))

layer(Server, { timeout: "120 seconds" })("jobs a user may queue", (it) => {
  it.effect("past MAX_QUEUED_JOBS_PER_USER of a kind, a backtest answers 429 with Retry-After; another user and another kind are not held; a cancelled one frees a place", () =>
    Effect.gen(function*() {
      const alice = yield* signUp("alice")
      const program = yield* call("POST", "/api/programs", {
        token: alice.token,
        body: { name: "p", code: tradingProgram }
      })
      const backtest = (token: string, programId: number) =>
        call("POST", `/api/programs/${programId}/backtest`, { token, body: shortRun })
      const first = yield* backtest(alice.token, program.body.id)
      expect(first.status).toBe(202)
      expect((yield* backtest(alice.token, program.body.id)).status).toBe(202)
      const refused = yield* backtest(alice.token, program.body.id)
      expectError(refused, 429, "rate_limited")
      expect(refused.body.retry_after).toBe(10)
      expect(refused.headers.get("retry-after")).toBe("10")

      // Insights are another kind, with places of their own.
      for (let i = 0; i < 2; i++) {
        expect((yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} })).status).toBe(202)
      }
      expectError(yield* call("POST", "/api/ai/insight", { token: alice.token, body: {} }), 429, "rate_limited")

      const bob = yield* signUp("bob")
      const bobs = yield* call("POST", "/api/programs", { token: bob.token, body: { name: "p", code: tradingProgram } })
      expect((yield* backtest(bob.token, bobs.body.id)).status).toBe(202)

      expect((yield* call("POST", `/api/programs/backtest/${first.body.id}/cancel`, { token: alice.token })).status)
        .toBe(
          200
        )
      expect((yield* backtest(alice.token, program.body.id)).status).toBe(202)
    }))
})
