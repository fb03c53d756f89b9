import type { Decider } from "../../src/sandbox/Decider.js"
import type { AccountView, Decision } from "../../src/sandbox/Decision.js"
import type { Candle } from "../../src/venues/Venue.js"

/** Hourly bars whose close swings around 100, so averages cross now and then. */
export const bars = (count: number): Array<Candle> =>
  Array.from({ length: count }, (_, i) => {
    const close = 100 + 10 * Math.sin(i / 5)
    return {
      time: 1_700_000_000_000 + i * 3_600_000,
      open: close - 1,
      high: close + 2,
      low: close - 2,
      close,
      volume: 10 + i
    }
  })

export const flat: AccountView = { position: null, balance: 10_000, equity: 10_000 }

/** Feeds the bars to the program and answers its decisions other than hold. */
export const decisions = (decider: Decider, candles: ReadonlyArray<Candle>, account: AccountView = flat) => {
  decider.chunk([candles])
  const out: Array<Decision> = []
  const state = { balance: account.balance, positions: [account.position] }
  for (let from = 0; from < candles.length;) {
    const stop = decider.decide(from, state, [{ floor: -Infinity, ceiling: Infinity }])
    if (stop.decisions !== undefined) out.push(stop.decisions[0]!)
    from = stop.decisions === undefined ? stop.index : stop.index + 1
  }
  return out
}
