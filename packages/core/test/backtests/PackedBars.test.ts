import { describe, expect, it } from "@effect/vitest"
import { packBars, unpackBars } from "../../src/backtests/PackedBars.js"

describe("packed bars", () => {
  const candle = (time: number, close: number) => ({
    time,
    open: close - 0.5,
    high: close + 1.25,
    low: close - 2.125,
    close,
    volume: close / 3
  })
  const bars = [
    [candle(1_700_000_000_000, 101.1), candle(1_700_000_060_000, 0.1 + 0.2)],
    [candle(1_700_000_000_000, 2.5e-9), candle(1_700_000_060_000, 65_432.123456789)]
  ]

  it("cross in shared memory and come back as the same candles, every symbol and field", () => {
    const packed = packBars(bars)
    expect(packed.length).toBe(2)
    expect(packed.columns.map((column) => column.buffer instanceof SharedArrayBuffer)).toEqual([true, true])
    expect(unpackBars(packed)).toEqual(bars)
  })

  it("an empty window packs to none", () => {
    expect(unpackBars(packBars([]))).toEqual([])
    expect(unpackBars(packBars([[]]))).toEqual([[]])
  })
})
