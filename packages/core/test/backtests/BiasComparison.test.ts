import { describe, expect, it } from "@effect/vitest"
import type { BacktestFill } from "../../src/backtests/Backtest.js"
import { firstDivergence, lookaheadDivergence, warmupDivergence } from "../../src/backtests/BiasComparison.js"

const hour = 3_600_000
const fill = (hours: number, side: "buy" | "sell", reason: BacktestFill["reason"] = "signal"): BacktestFill => ({
  symbol: "BTC",
  time: hours * hour,
  side,
  quantity: 0.1,
  price: 100 + hours,
  fee: 0.01,
  reason
})

describe("bias comparison", () => {
  const full = [fill(1, "buy"), fill(5, "sell"), fill(9, "buy"), fill(12, "sell")]

  it("a run cut at a bar agrees with the full run on the fills before it; its closing at the end is left out", () => {
    expect(
      lookaheadDivergence(
        full,
        [fill(1, "buy"), fill(5, "sell"), fill(9, "buy"), fill(10, "sell", "end_of_data")],
        11 * hour
      )
    )
      .toBeUndefined()
  })

  it("a cut run that decided otherwise before the cut is found, at its first differing fill", () => {
    // As a program reading the future would: it sold at 5 in the full run, and held in the cut one.
    const cut = [fill(1, "buy"), fill(9, "buy"), fill(10, "sell", "end_of_data")]
    expect(lookaheadDivergence(full, cut, 11 * hour)).toEqual({
      expected: fill(5, "sell"),
      found: fill(9, "buy"),
      fields: ["time", "side", "price"]
    })
  })

  it("a fill missing from either run is a difference named `fill`", () => {
    expect(lookaheadDivergence(full, [fill(1, "buy")], 6 * hour)).toEqual({
      expected: fill(5, "sell"),
      found: undefined,
      fields: ["fill"]
    })
    expect(warmupDivergence([], [fill(3, "buy")])).toEqual({
      expected: undefined,
      found: fill(3, "buy"),
      fields: ["fill"]
    })
  })

  it("the warm-up comparison takes every fill, its quantities exactly", () => {
    expect(warmupDivergence(full, full)).toBeUndefined()
    const resized = full.map((f, i) => i === 3 ? { ...f, quantity: 0.1000001 } : f)
    expect(firstDivergence(full, resized)?.fields).toEqual(["quantity"])
  })
})
