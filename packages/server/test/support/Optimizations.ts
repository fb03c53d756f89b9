import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { isFinished, shortRun } from "./Backtests.js"
import { call, type Reply } from "./TestServer.js"

/** Moving averages of the closes, crossing: long while the fast one is above the slow one. */
export const smaProgram = `export const parameters = {
  fast: { kind: "int", min: 2, max: 30, default: 5 },
  slow: { kind: "int", min: 10, max: 100, default: 20 },
  size: { kind: "float", min: 0.1, max: 1, default: 0.5 }
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
export function decide(data) {
  const closes = data.candles.map((c) => c.close)
  const { fast, slow, size } = data.params
  if (closes.length < slow) return { operation: "hold" }
  const up = mean(closes.slice(-fast)) > mean(closes.slice(-slow))
  if (up && !data.position) return { operation: "buy", target_portion_of_balance: size }
  if (!up && data.position) return { operation: "close" }
  return { operation: "hold" }
}
`

/** A 3 × 3 grid of `smaProgram` over two weeks of hourly bars, ranked by return. */
export const smaGrid = {
  ...shortRun,
  search: "grid",
  space: { fast: { min: 3, max: 9, step: 3 }, slow: { min: 20, max: 40, step: 10 } },
  params: { size: 0.8 },
  objective: "total_return"
}

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Polls the optimisation (on the real clock: workers run in real time) until it has finished, or fails the test at the deadline. */
export const waitForOptimization = (token: string, program: number, id: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 90_000
    for (;;) {
      const reply: Reply = yield* call("GET", `/api/programs/${program}/optimizations/${id}`, { token })
      expect(reply.status).toBe(200)
      if (isFinished(reply.body)) return reply.body
      if (Date.now() > deadline) return yield* Effect.die(new Error(`optimization ${id} still ${reply.body.status}`))
      yield* realPause
    }
  })
