/**
 * Robustness figures of one completed backtest, as pure functions: Monte Carlo on its trades and
 * the deflated Sharpe ratio of its returns. Seeded, so the same inputs give the same figures.
 */
import { normalCdf, normalQuantile } from "../stats/Normal.js"
import { mulberry32 } from "../stats/Random.js"

/**
 * The p-th percentile (0..100) of ascending values, interpolated linearly between the closest
 * ranks (Hyndman & Fan's type 7, numpy's default and Python's `quantiles(method="inclusive")`).
 */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number => {
  const rank = (p / 100) * (sorted.length - 1)
  const low = Math.floor(rank)
  const high = Math.min(low + 1, sorted.length - 1)
  return sorted[low]! + (rank - low) * (sorted[high]! - sorted[low]!)
}

/** The percentiles a Monte Carlo answers. */
export const percentileLevels = [5, 25, 50, 75, 95] as const

export interface Percentiles {
  readonly p5: number
  readonly p25: number
  readonly p50: number
  readonly p75: number
  readonly p95: number
}

/** The percentiles of `values` (sorted in place). */
export const percentilesOf = (values: Array<number>): Percentiles => {
  const sorted = values.sort((a, b) => a - b)
  const [p5, p25, p50, p75, p95] = percentileLevels.map((p) => percentile(sorted, p)) as [
    number,
    number,
    number,
    number,
    number
  ]
  return { p5, p25, p50, p75, p95 }
}

/** `reshuffle`: the trades in a random order (each once); `resample`: as many trades drawn with replacement. */
export type MonteCarloMethod = "reshuffle" | "resample"

export interface MonteCarloInput {
  /** Each trade's `pnl`, in the order they closed. */
  readonly pnls: ReadonlyArray<number>
  readonly initialBalance: number
  readonly runs: number
  readonly seed: number
  readonly method: MonteCarloMethod
  /** A run is ruined when its equity falls to or below this share (percent) of loss of the initial balance. */
  readonly ruinPercent: number
}

export interface MonteCarloFigures {
  readonly final_return_percent: Percentiles
  readonly max_drawdown_percent: Percentiles
  /** The share (0..1) of runs ruined. */
  readonly probability_of_ruin: number
}

/**
 * Monte Carlo on a backtest's trades. Each run orders (`reshuffle`) or draws (`resample`) the
 * trades, and builds its equity path as the cumulative sum of their pnls on the initial balance:
 * E0 = initial, Ek = E(k-1) + pnl_k. Its final return is (En - E0) / E0, its maximum drawdown the
 * largest (peak - Ek) / peak over k with the peak the highest of E0..Ek, and it is ruined when some
 * Ek <= E0 * (1 - ruinPercent / 100). One generator, seeded once, serves every run in turn.
 */
export const monteCarlo = (input: MonteCarloInput): MonteCarloFigures => {
  const { initialBalance, pnls } = input
  const random = mulberry32(input.seed)
  const floor = initialBalance * (1 - input.ruinPercent / 100)
  const n = pnls.length
  const order = Array.from(pnls)
  const finals: Array<number> = []
  const drawdowns: Array<number> = []
  let ruined = 0
  for (let run = 0; run < input.runs; run++) {
    if (input.method === "reshuffle") {
      // Fisher–Yates, continuing from the previous run's order: every permutation stays equally likely.
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1))
        const swap = order[i]!
        order[i] = order[j]!
        order[j] = swap
      }
    } else {
      for (let i = 0; i < n; i++) order[i] = pnls[Math.floor(random() * n)]!
    }
    let equity = initialBalance
    let peak = initialBalance
    let worst = 0
    let fell = false
    for (const pnl of order) {
      equity += pnl
      peak = Math.max(peak, equity)
      worst = Math.max(worst, (peak - equity) / peak)
      fell ||= equity <= floor
    }
    finals.push(((equity - initialBalance) / initialBalance) * 100)
    drawdowns.push(worst * 100)
    if (fell) ruined++
  }
  return {
    final_return_percent: percentilesOf(finals),
    max_drawdown_percent: percentilesOf(drawdowns),
    probability_of_ruin: ruined / input.runs
  }
}

/** The Euler–Mascheroni constant γ. */
export const eulerGamma = 0.5772156649015329

/**
 * The expected maximum Sharpe ratio of `trials` independent trials whose Sharpe ratios have
 * variance `variance`, when their true Sharpe ratio is 0 (Bailey & López de Prado 2014, eq. 2):
 * √V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e))). One trial has no selection to deflate: 0.
 */
export const expectedMaxSharpe = (trials: number, variance: number): number =>
  trials <= 1 ? 0 : Math.sqrt(variance) *
    ((1 - eulerGamma) * normalQuantile(1 - 1 / trials) + eulerGamma * normalQuantile(1 - 1 / (trials * Math.E)))

/**
 * The probabilistic Sharpe ratio (Bailey & López de Prado 2012; 2014, eq. 1): the probability
 * that the true Sharpe ratio exceeds `benchmark`, given the observed per-period `sharpe` of `count`
 * returns of that `skewness` and (non-excess) `kurtosis`:
 * Φ((SR − SR*) √(T − 1) / √(1 − γ3 SR + (γ4 − 1)/4 SR²)).
 */
export const probabilisticSharpe = (
  sharpe: number,
  benchmark: number,
  count: number,
  skewness: number,
  kurtosis: number
): number =>
  normalCdf(
    ((sharpe - benchmark) * Math.sqrt(count - 1)) /
      Math.sqrt(1 - skewness * sharpe + ((kurtosis - 1) / 4) * sharpe * sharpe)
  )

/** What the deflated Sharpe ratio reads of a series of returns. */
export interface ReturnMoments {
  /** T, the number of returns. */
  readonly count: number
  /** Their mean over their standard deviation (with T − 1), not annualised. */
  readonly sharpe: number
  /** The third standardised central moment (population moments). */
  readonly skewness: number
  /** The fourth standardised central moment, not excess: 3 for normal returns. */
  readonly kurtosis: number
}

/** The moments of `returns`; undefined for fewer than two returns or returns that do not vary. */
export const returnMoments = (returns: ReadonlyArray<number>): ReturnMoments | undefined => {
  const count = returns.length
  if (count < 2) return undefined
  const mean = returns.reduce((a, r) => a + r, 0) / count
  const moment = (k: number) => returns.reduce((a, r) => a + (r - mean) ** k, 0) / count
  const m2 = moment(2)
  if (!(m2 > 0)) return undefined
  return {
    count,
    sharpe: mean / Math.sqrt((m2 * count) / (count - 1)),
    skewness: moment(3) / m2 ** 1.5,
    kurtosis: moment(4) / (m2 * m2)
  }
}

export interface DeflatedSharpe {
  readonly expected_max_sharpe: number
  /** PSR against 0. */
  readonly probabilistic_sharpe: number
  /** PSR against the expected maximum Sharpe ratio of the trials. */
  readonly deflated_sharpe: number
}

/**
 * The deflated Sharpe ratio (Bailey & López de Prado, "The Deflated Sharpe Ratio", 2014): the
 * probabilistic Sharpe ratio against the Sharpe ratio the best of `trials` would show by luck.
 * With one trial it is the probabilistic Sharpe ratio against 0.
 */
export const deflatedSharpe = (moments: ReturnMoments, trials: number, variance: number): DeflatedSharpe => {
  const { count, kurtosis, sharpe, skewness } = moments
  const benchmark = expectedMaxSharpe(trials, variance)
  return {
    expected_max_sharpe: benchmark,
    probabilistic_sharpe: probabilisticSharpe(sharpe, 0, count, skewness, kurtosis),
    deflated_sharpe: probabilisticSharpe(sharpe, benchmark, count, skewness, kurtosis)
  }
}
