import { barFields, writeColumns } from "../sandbox/BarColumns.js"
import type { Bars } from "../sandbox/Decider.js"
import type { Candle } from "../venues/Venue.js"

/**
 * Bars as they cross to a backtest or trial thread: per symbol one column of each field in shared
 * memory. Posting candles as objects clones each one (sending alone took about 0.6 µs a bar, a third
 * of a second for a year of one-minute bars); shared memory crosses without a copy, and every trial
 * thread of an optimisation reads the same columns.
 */
export interface PackedBars {
  readonly length: number
  /** Per symbol, `barFields` columns of `length` numbers each (see `writeColumns`). */
  readonly columns: ReadonlyArray<Float64Array>
}

export const packBars = (bars: Bars): PackedBars => {
  const length = bars[0]?.length ?? 0
  return {
    length,
    columns: bars.map((candles) => {
      const column = new Float64Array(new SharedArrayBuffer(barFields * length * Float64Array.BYTES_PER_ELEMENT))
      writeColumns(candles, column, 0)
      return column
    })
  }
}

/** The candles again, in the thread that steps them. */
export const unpackBars = ({ columns, length }: PackedBars): Bars =>
  columns.map((column) => {
    const candles: Array<Candle> = []
    for (let i = 0; i < length; i++) {
      candles.push({
        time: column[i]!,
        open: column[length + i]!,
        high: column[2 * length + i]!,
        low: column[3 * length + i]!,
        close: column[4 * length + i]!,
        volume: column[5 * length + i]!
      })
    }
    return candles
  })
