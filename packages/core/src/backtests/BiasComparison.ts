import type { BacktestFill } from "./Backtest.js"

/** Where two runs' fills first part: the index, and each run's fill there (undefined past its end). */
export interface FillDivergence {
  readonly expected: BacktestFill | undefined
  readonly found: BacktestFill | undefined
  /** The fields that differ, or `fill` when one run has none there. */
  readonly fields: ReadonlyArray<string>
}

// The fee follows from these and the run's terms, which both runs share.
const compared = ["symbol", "time", "side", "quantity", "price", "reason"] as const

/** The first fill where `found` departs from `expected`, in order, with exact numbers: the engine is deterministic. */
export const firstDivergence = (
  expected: ReadonlyArray<BacktestFill>,
  found: ReadonlyArray<BacktestFill>
): FillDivergence | undefined => {
  for (let i = 0; i < Math.max(expected.length, found.length); i++) {
    const a = expected[i], b = found[i]
    if (a === undefined || b === undefined) return { expected: a, found: b, fields: ["fill"] }
    const fields = compared.filter((field) => a[field] !== b[field])
    if (fields.length > 0) return { expected: a, found: b, fields }
  }
  return undefined
}

/**
 * The lookahead comparison of a run cut before `cut` (epoch ms) with the full run: the fills at
 * bars before the cut must be the same. The cut run's closing of what is still open at its last
 * bar (`end_of_data`) is its end, not a decision, so it is left out.
 */
export const lookaheadDivergence = (
  full: ReadonlyArray<BacktestFill>,
  cutRun: ReadonlyArray<BacktestFill>,
  cut: number
) => firstDivergence(full.filter((f) => f.time < cut), cutRun.filter((f) => f.reason !== "end_of_data"))

/** The warm-up comparison: over the same range, every fill must be the same whatever the history before it. */
export const warmupDivergence = (
  reference: ReadonlyArray<BacktestFill>,
  shorter: ReadonlyArray<BacktestFill>
) => firstDivergence(reference, shorter)
