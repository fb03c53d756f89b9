import type { Bars } from "../sandbox/Decider.js"
import type { Candle } from "../venues/Venue.js"

/** A bar in which nothing traded: flat at `price`. */
const flat = (time: number, price: number): Candle => ({
  time,
  open: price,
  high: price,
  low: price,
  close: price,
  volume: 0
})

/**
 * Several symbols' candles over one window, as `Bars`: every symbol gets a bar at every time any of
 * them has one (oldest first). A symbol with no candle at a time (a gap, or not yet listed) gets
 * a flat bar with no volume at its last close, `carried` from the windows before, or at its first
 * open when it has none yet. `carried` is updated with each symbol's last bar. Undefined when a
 * symbol has no candle in the window and none before it.
 */
export const alignBars = (
  windows: ReadonlyArray<ReadonlyArray<Candle>>,
  carried: Array<Candle | undefined>
): Bars | undefined => {
  if (windows.length === 1) {
    carried[0] = windows[0]!.at(-1) ?? carried[0]
    return windows
  }
  const times = [...new Set(windows.flatMap((candles) => candles.map((c) => c.time)))].sort((a, b) => a - b)
  const aligned: Array<Array<Candle>> = []
  for (const [s, candles] of windows.entries()) {
    let last = carried[s] ?? candles[0]
    if (last === undefined) return undefined
    const bars: Array<Candle> = []
    let k = 0
    for (const time of times) {
      const candle = candles[k]
      if (candle !== undefined && candle.time === time) {
        bars.push(candle)
        last = candle
        k++
      } else {
        // Before the symbol's first candle `last` is that candle, whose open stands for the price then.
        bars.push(flat(time, last.time > time ? last.open : last.close))
      }
    }
    carried[s] = last
    aligned.push(bars)
  }
  return aligned
}
