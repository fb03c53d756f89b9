/**
 * Figures of an optimisation's overfitting, as pure functions: the probability of backtest
 * overfitting by combinatorially symmetric cross-validation, and the sensitivity of the objective
 * to each parameter around the best point.
 */
import { type Percentiles, percentilesOf } from "../backtests/Robustness.js"
import type { Choice } from "../programs/Parameters.js"
import type { Dimension, Point, SearchKind, Space } from "./Search.js"

/** Every way to take `k` of `0..n-1`, each in ascending order. */
export const combinations = (n: number, k: number): Array<Array<number>> => {
  const all: Array<Array<number>> = []
  const pick = (from: number, chosen: Array<number>) => {
    if (chosen.length === k) {
      all.push([...chosen])
      return
    }
    for (let i = from; i <= n - (k - chosen.length); i++) {
      chosen.push(i)
      pick(i + 1, chosen)
      chosen.pop()
    }
  }
  pick(0, [])
  return all
}

/** Mean over standard deviation (with n − 1) of n returns given their sum and sum of squares; 0 when they do not vary. */
const sharpeOfSums = (sum: number, squares: number, n: number): number => {
  const mean = sum / n
  const variance = (squares - n * mean * mean) / (n - 1)
  // Constant returns leave a rounding residue instead of 0: a relative floor keeps it from dividing.
  return variance > 1e-12 * (squares / n) ? mean / Math.sqrt(variance) : 0
}

export interface CscvInput {
  /** Each trial's returns over the same T periods (the columns of the paper's matrix M). */
  readonly returns: ReadonlyArray<ReadonlyArray<number>>
  /** S, even: the blocks the periods are cut into. */
  readonly partitions: number
}

export interface CscvFigures {
  readonly partitions: number
  /** The periods used: T less its remainder by S, dropped from the start so every block has T / S of them. */
  readonly periods: number
  readonly trials: number
  /** C(S, S/2). */
  readonly combinations: number
  /** The share of combinations whose in-sample best ranks in the lower half out of sample (λ ≤ 0). */
  readonly probability_of_overfitting: number
  /** λ = ln(ω̄ / (1 − ω̄)) across the combinations. */
  readonly logits: Percentiles
  /** The in-sample best's out-of-sample Sharpe ratio against its in-sample one, across the combinations. */
  readonly degradation: {
    /** Of the least-squares line OOS = intercept + slope · IS; null when the in-sample figures do not vary. */
    readonly slope: number | null
    readonly intercept: number | null
    /** The share of combinations whose in-sample best loses out of sample (its Sharpe ratio below 0). */
    readonly probability_of_loss: number
  }
}

/**
 * Combinatorially symmetric cross-validation (Bailey, Borwein, López de Prado & Zhu, "The
 * Probability of Backtest Overfitting", J. Computational Finance 20(4), 2017, §2.2): cut the T
 * periods into S blocks; for each of the C(S, S/2) ways to take half of them as the in-sample set J
 * (the rest, J̄, out of sample), pick the trial n* of the best Sharpe ratio over J, find the
 * relative rank ω̄ = rank / (N + 1) of its Sharpe ratio over J̄ among all N trials' (1 the lowest,
 * ties averaged), and λ = ln(ω̄ / (1 − ω̄)). PBO is the share of λ ≤ 0. The Sharpe ratios are per
 * period, not annualised: J and J̄ have the same length, so only their order matters. Undefined
 * with fewer than 2 trials or too few periods for 2 returns in sample.
 */
export const cscv = ({ partitions: s, returns }: CscvInput): CscvFigures | undefined => {
  const n = returns.length
  const t = n === 0 ? 0 : returns[0]!.length
  const block = Math.floor(t / s)
  const half = s / 2
  if (n < 2 || block * half < 2) return undefined
  const skip = t - block * s
  // Each block's sum and sum of squares per trial: a set's Sharpe ratio adds S/2 of them, not T/2 returns.
  const sums = Array.from({ length: s }, () => new Float64Array(n))
  const squares = Array.from({ length: s }, () => new Float64Array(n))
  returns.forEach((series, trial) => {
    for (let i = skip; i < t; i++) {
      const b = Math.floor((i - skip) / block)
      sums[b]![trial] = sums[b]![trial]! + series[i]!
      squares[b]![trial] = squares[b]![trial]! + series[i]! * series[i]!
    }
  })
  const totalSums = new Float64Array(n)
  const totalSquares = new Float64Array(n)
  for (let b = 0; b < s; b++) {
    for (let j = 0; j < n; j++) {
      totalSums[j] = totalSums[j]! + sums[b]![j]!
      totalSquares[j] = totalSquares[j]! + squares[b]![j]!
    }
  }
  const length = block * half
  const logits: Array<number> = []
  const inSample: Array<number> = []
  const outOfSample: Array<number> = []
  /** One combination: the best trial over `inSharpes`, and where its Sharpe ratio ranks among `outSharpes`. */
  const judge = (inSharpes: Float64Array, outSharpes: Float64Array) => {
    // The earliest trial of equals, as the optimisation picks its best.
    let best = 0
    for (let j = 1; j < n; j++) if (inSharpes[j]! > inSharpes[best]!) best = j
    const out = outSharpes[best]!
    let below = 0
    let ties = 0
    for (const sharpe of outSharpes) {
      if (sharpe < out) below++
      else if (sharpe === out) ties++
    }
    const rank = (below + (ties + 1) / 2) / (n + 1)
    logits.push(Math.log(rank / (1 - rank)))
    inSample.push(inSharpes[best]!)
    outOfSample.push(out)
  }
  const sumsOf = new Float64Array(n)
  const squaresOf = new Float64Array(n)
  const these = new Float64Array(n)
  const rest = new Float64Array(n)
  // The combinations holding block 0 are half of them, and their complements the other half: each
  // pair's two Sharpe ratios per trial serve both, in sample one way and out of sample the other.
  for (const chosen of combinations(s, half).filter((c) => c[0] === 0)) {
    sumsOf.fill(0)
    squaresOf.fill(0)
    for (const b of chosen) {
      const blockSums = sums[b]!
      const blockSquares = squares[b]!
      for (let j = 0; j < n; j++) {
        sumsOf[j] = sumsOf[j]! + blockSums[j]!
        squaresOf[j] = squaresOf[j]! + blockSquares[j]!
      }
    }
    for (let j = 0; j < n; j++) {
      these[j] = sharpeOfSums(sumsOf[j]!, squaresOf[j]!, length)
      rest[j] = sharpeOfSums(totalSums[j]! - sumsOf[j]!, totalSquares[j]! - squaresOf[j]!, length)
    }
    judge(these, rest)
    judge(rest, these)
  }
  const count = logits.length
  const meanIn = inSample.reduce((a, x) => a + x, 0) / count
  const meanOut = outOfSample.reduce((a, x) => a + x, 0) / count
  let covariance = 0
  let spread = 0
  for (let c = 0; c < count; c++) {
    covariance += (inSample[c]! - meanIn) * (outOfSample[c]! - meanOut)
    spread += (inSample[c]! - meanIn) ** 2
  }
  const slope = spread > 0 ? covariance / spread : null
  return {
    partitions: s,
    periods: block * s,
    trials: n,
    combinations: count,
    probability_of_overfitting: logits.filter((l) => l <= 0).length / count,
    logits: percentilesOf([...logits]),
    degradation: {
      slope,
      intercept: slope === null ? null : meanOut - slope * meanIn,
      probability_of_loss: outOfSample.filter((x) => x < 0).length / count
    }
  }
}

/** A finished search trial as the sensitivity reads it. */
export interface ScoredTrial {
  readonly params: Readonly<Record<string, unknown>>
  /** Null when it broke a constraint. */
  readonly objective: number | null
}

export interface Sensitivity {
  readonly parameter: string
  /** The best point and its neighbours along the parameter, in the parameter's order. */
  readonly values: ReadonlyArray<{ readonly value: Choice; readonly objective: number | null }>
  /**
   * The largest fall (most negative change) of the objective from the best point's to a nearest
   * neighbour's, in percent of the best's magnitude; null when no neighbour has an objective or the
   * best's is 0.
   */
  readonly change_percent: number | null
}

/**
 * How far a dimension's value may be from the best point's and still count as the same: an int
 * or a choice must be equal; a float within half a grid step in a grid, within 1% of its range in a
 * random or TPE search (whose floats are drawn, so never equal).
 */
const tolerance = (d: Dimension, search: SearchKind): number =>
  d.kind !== "float" ? 0 : search === "grid" ? (d.max - d.min) / ((d.steps ?? 10) - 1) / 2 : (d.max - d.min) / 100

const near = (d: Dimension, search: SearchKind, a: unknown, b: unknown) =>
  typeof a === "number" && typeof b === "number" ? Math.abs(a - b) <= tolerance(d, search) : a === b

/**
 * The objective's sensitivity to each searched parameter around the best point: the trials whose
 * other searched parameters are the best's (see `tolerance`) are its neighbours along the
 * parameter. For a number, the nearest neighbours are the closest values below and above the
 * best's (a grid's one step either side); a choice has no order, so every other choice is one.
 */
export const sensitivity = (
  space: Space,
  search: SearchKind,
  trials: ReadonlyArray<ScoredTrial>,
  best: Point,
  bestObjective: number | null
): Array<Sensitivity> =>
  space.map((d) => {
    const others = space.filter((o) => o.name !== d.name)
    const line = trials.filter((t) => others.every((o) => near(o, search, t.params[o.name], best[o.name])))
    const order = (value: unknown) => d.kind === "choice" ? d.choices.indexOf(value as Choice) : value as number
    const values = line
      .map((t) => ({ value: t.params[d.name] as Choice, objective: t.objective }))
      .sort((a, b) => order(a.value) - order(b.value))
    const at = order(best[d.name])
    const scored = values.filter((v) => v.objective !== null && order(v.value) !== at)
    const below = scored.filter((v) => order(v.value) < at).at(-1)
    const above = scored.find((v) => order(v.value) > at)
    const nearest = d.kind === "choice" ? scored : [below, above].flatMap((v) => v === undefined ? [] : [v])
    const changes = nearest.map((v) => ((v.objective! - bestObjective!) / Math.abs(bestObjective!)) * 100)
    return {
      parameter: d.name,
      values,
      change_percent: bestObjective === null || bestObjective === 0 || changes.length === 0
        ? null
        : Math.min(...changes)
    }
  })
