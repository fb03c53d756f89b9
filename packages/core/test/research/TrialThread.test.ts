import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { defaultSettings } from "../../src/backtests/Backtest.js"
import { packBars } from "../../src/backtests/PackedBars.js"
import { keptWarm } from "../../src/jobs/WorkerThread.js"
import { startTrialThread } from "../../src/research/TrialThread.js"
import { defaultSandboxLimits } from "../../src/sandbox/SandboxLimits.js"
import { bars } from "../sandbox/Drive.js"
import { reportV8Unavailable, runtimes } from "../sandbox/Runtimes.js"

const settings = defaultSettings("1h")
const candles = bars(300)
// `spin` makes a trial spend its whole budget at its first bar; otherwise it trades every tenth bar.
const code = `let n = 0
export function decide(data) {
  if (data.params.spin) for (;;) {}
  if (++n % 10 !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: 0.5 }
}`
const trial = (spin: boolean) => ({
  params: { spin },
  start: candles[0]!.time,
  end: candles.at(-1)!.time + 1,
  warmup: 0,
  full: true
})

reportV8Unavailable()

describe.each(runtimes)("trial threads running $name", ({ runtime }) => {
  const input = {
    run: { code, symbols: ["BTC"], timeframe: "1h" as const, seed: 1 },
    settings,
    markets: [{ rules: settings.rules, funding: { _tag: "Rates" as const, rates: [] } }],
    limits: { ...defaultSandboxLimits, runtime },
    bars: packBars([candles])
  }

  it.live(
    "a trial interrupted before its answer leaves no answer behind for the next trial",
    () =>
      Effect.gen(function*() {
        const borrow = yield* keptWarm(startTrialThread(input), 1)
        const run = (spin: boolean) => Effect.scoped(Effect.flatMap(borrow, (thread) => thread.run(trial(spin))))
        // Its answer (the budget spent) comes long after the interruption: the thread is starting, then loops.
        const spinning = yield* Effect.fork(run(true))
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        yield* Fiber.interrupt(spinning)
        const outcome = yield* run(false)
        expect(outcome.trades.length).toBeGreaterThan(5)
        // The thread that answered is lent again, and the same trial gives the same outcome.
        expect(yield* run(false)).toEqual(outcome)
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
