import { hostTa } from "../indicators/TaSource.js"
import type { Candle } from "../venues/Venue.js"
import type { FactorDefinition, MarketInput } from "./FactorCatalogue.js"
import type { RankingRow } from "./Ranking.js"

/** What the factors of one symbol are computed from. */
export interface SymbolInputs {
  readonly symbol: string
  /** Oldest first; the table uses the last `tableBars`. */
  readonly candles: ReadonlyArray<Candle>
  /** The sampled market values; absent or null where the venue gave none. */
  readonly market: Readonly<Partial<Record<MarketInput, number | null>>>
}

/** Bars each candle factor sees: the window a program's `data.candles` holds, so `ta` agrees. */
export const tableBars = 500

/** z-scores beyond this many standard deviations are clipped to it, so one outlier cannot dominate a score. */
export const winsorLimit = 3

/**
 * One factor's value for one symbol: the `ta` helper that programs call (the host's copy of the
 * sandbox's source), or the sampled market value. Null for too little data or a non-finite value.
 */
export const factorValue = (factor: FactorDefinition, inputs: SymbolInputs): number | null => {
  const { input } = factor
  const value = input.kind === "ta" ? hostTa[input.helper](inputs.candles, ...input.args) : inputs.market[input.input]
  return typeof value === "number" && Number.isFinite(value) ? value : null
}

/**
 * z-scores across symbols (population standard deviation), clipped to ±`winsorLimit`; null stays
 * null. With fewer than two values, or all equal, every present value scores 0: the factor then
 * tells the symbols nothing apart.
 */
export const normalise = (values: ReadonlyArray<number | null>): Array<number | null> => {
  let n = 0, sum = 0
  for (const v of values) {
    if (v !== null) {
      n++
      sum += v
    }
  }
  const mean = sum / n
  let sq = 0
  for (const v of values) if (v !== null) sq += (v - mean) * (v - mean)
  const sd = Math.sqrt(sq / n)
  return values.map((v) =>
    v === null ? null : n < 2 || !(sd > 0) ? 0 : Math.max(-winsorLimit, Math.min(winsorLimit, (v - mean) / sd))
  )
}

/**
 * The ranking of `symbols` on `factors` (each with its weight): raw values, normalised across the
 * symbols, negated where lower is better, combined into the weighted mean over the factors each
 * symbol has a value for, sorted by score (then symbol). A symbol with no value for any factor of
 * positive weight is left out and named in `errors`.
 */
export const rankSymbols = (
  symbols: ReadonlyArray<SymbolInputs>,
  factors: ReadonlyArray<readonly [FactorDefinition, number]>
) => {
  const raw = factors.map(([factor]) => symbols.map((s) => factorValue(factor, s)))
  const scores = raw.map((values, f) => {
    const sign = factors[f]![0].higher_is === "better" ? 1 : -1
    // + 0 turns -0 into 0.
    return normalise(values).map((z) => (z === null ? null : sign * z + 0))
  })
  const rows: Array<Omit<RankingRow, "rank">> = []
  const errors: Record<string, string> = {}
  symbols.forEach((s, i) => {
    const values: Record<string, number | null> = {}
    const normalized: Record<string, number> = {}
    const missing: Array<string> = []
    let weighted = 0, weights = 0
    factors.forEach(([factor, weight], f) => {
      values[factor.key] = raw[f]![i]!
      const z = scores[f]![i]!
      if (z === null) {
        missing.push(factor.key)
        return
      }
      normalized[factor.key] = z
      weighted += weight * z
      weights += weight
    })
    if (weights === 0) errors[s.symbol] = "no data for any chosen factor of positive weight"
    else rows.push({ symbol: s.symbol, score: weighted / weights, factors: values, normalized, missing })
  })
  rows.sort((a, b) => b.score - a.score || (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0))
  return { rows: rows.map((row, i): RankingRow => ({ rank: i + 1, ...row })), errors }
}
