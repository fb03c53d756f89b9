import type { Candle } from "../venues/Venue.js"

/** Numbers per bar when bars cross as columns: time, open, high, low, close, volume. */
export const barFields = 6

/**
 * Writes `candles` into `into` from `offset` as columns, one per field in `barFields`' order,
 * each `candles.length` long: how bars cross into the sandbox and to threads.
 */
export const writeColumns = (candles: ReadonlyArray<Candle>, into: Float64Array, offset: number): void => {
  const n = candles.length
  for (let i = 0; i < n; i++) {
    const c = candles[i]!
    into[offset + i] = c.time
    into[offset + n + i] = c.open
    into[offset + 2 * n + i] = c.high
    into[offset + 3 * n + i] = c.low
    into[offset + 4 * n + i] = c.close
    into[offset + 5 * n + i] = c.volume
  }
}
