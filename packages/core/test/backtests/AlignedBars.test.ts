import { describe, expect, it } from "@effect/vitest"
import { alignBars } from "../../src/backtests/AlignedBars.js"
import type { Candle } from "../../src/venues/Venue.js"

const candle = (time: number, open: number, close: number): Candle => ({
  time,
  open,
  high: Math.max(open, close),
  low: Math.min(open, close),
  close,
  volume: 5
})
/** What a symbol without a candle gets: nothing traded, at `price`. */
const flat = (time: number, price: number): Candle => ({ ...candle(time, price, price), volume: 0 })

describe("alignBars", () => {
  it("gives every symbol a bar at every time any has one: a gap is flat at the last close, before the first at its open", () => {
    const carried: Array<Candle | undefined> = [undefined, undefined]
    const btc = [candle(1, 10, 11), candle(2, 11, 12), candle(3, 12, 13)]
    const eth = [candle(2, 5, 6)]
    expect(alignBars([btc, eth], carried)).toEqual([btc, [flat(1, 5), eth[0], flat(3, 6)]])
    expect(carried).toEqual([btc[2], eth[0]])
    // The next window carries on from the last close.
    expect(alignBars([[candle(4, 13, 14)], []], carried)).toEqual([[candle(4, 13, 14)], [flat(4, 6)]])
  })

  it("answers undefined when a symbol has no candle in the window and none before it", () => {
    expect(alignBars([[candle(1, 10, 11)], []], [undefined, undefined])).toBeUndefined()
  })

  it("passes one symbol's candles through as they are", () => {
    const btc = [candle(1, 10, 11)]
    const carried: Array<Candle | undefined> = [undefined]
    expect(alignBars([btc], carried)).toEqual([btc])
    expect(carried).toEqual([btc[0]])
  })
})
