import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeDecisionThreads } from "../../src/automation/LiveDecision.js"
import { defaultSandboxLimits } from "../../src/sandbox/SandboxLimits.js"
import { bars } from "../sandbox/Drive.js"
import { reportV8Unavailable, runtimes } from "../sandbox/Runtimes.js"

const request = (code: string) => ({
  run: { code, symbols: ["BTC"], timeframe: "1h" as const, params: {}, seed: 1 },
  bars: [bars(30)],
  account: { balance: 10_000, positions: [null] }
})

const selling = `export function decide() { return { operation: "sell", target_portion_of_balance: 0.5 } }`

reportV8Unavailable()

describe.each(runtimes)("decision threads running $name", ({ runtime }) => {
  const limits = { ...defaultSandboxLimits, runtime }

  it.live(
    "a decision interrupted before its answer leaves no answer behind for the next one",
    () =>
      Effect.gen(function*() {
        const threads = yield* makeDecisionThreads(limits, 1)
        // Its answer (the budget spent) comes long after the interruption: the thread is starting, then loops.
        const endless = yield* Effect.fork(threads.decide(request(`export function decide() { for (;;) {} }`)))
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        yield* Fiber.interrupt(endless)
        const decisions = yield* threads.decide(request(selling))
        expect(decisions.map((d) => d.operation)).toEqual(["sell"])
        // And the thread that answered is lent again: the same answer.
        expect((yield* threads.decide(request(selling))).map((d) => d.operation)).toEqual(["sell"])
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
