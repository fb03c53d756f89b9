import type { Choice } from "../programs/Parameters.js"
import { normalCdf, normalQuantile } from "../stats/Normal.js"
import { mulberry32 } from "../stats/Random.js"

/** One searched parameter. `int` grid uses `step` (default 1); `float` grid uses `steps` evenly spaced values including both ends (default 10). */
export type Dimension =
  | { readonly name: string; readonly kind: "int"; readonly min: number; readonly max: number; readonly step?: number }
  | {
    readonly name: string
    readonly kind: "float"
    readonly min: number
    readonly max: number
    readonly steps?: number
  }
  | { readonly name: string; readonly kind: "choice"; readonly choices: ReadonlyArray<Choice> }
export type Space = ReadonlyArray<Dimension>
export type Point = Readonly<Record<string, Choice>>
export type SearchKind = "grid" | "random" | "tpe"
/** A finished trial as the search sees it: its point and its objective (higher is better); null when it failed or broke a constraint. */
export interface Observation {
  readonly point: Point
  readonly objective: number | null
}

/** An `int` or `float` dimension. */
export type NumericDimension = Extract<Dimension, { readonly kind: "int" | "float" }>

/** How many grid values a dimension has: an int's from min by step up to max, a float's `steps`. */
const sizeOf = (d: Dimension): number =>
  d.kind === "int"
    ? Math.floor((d.max - d.min) / (d.step ?? 1)) + 1
    : d.kind === "float"
    ? d.steps ?? 10
    : d.choices.length

/** A dimension's `k`-th grid value. A float's is min·(1 − t) + max·t, which is exactly min and max at the ends. */
const valueAt = (d: Dimension, k: number): Choice => {
  if (d.kind === "int") return d.min + k * (d.step ?? 1)
  if (d.kind === "choice") return d.choices[k]!
  const t = sizeOf(d) === 1 ? 0 : k / (sizeOf(d) - 1)
  return d.min * (1 - t) + d.max * t
}

/** How many points the grid has (product of each dimension's values). */
export const gridSize = (space: Space): number => space.reduce((size, d) => size * sizeOf(d), 1)

/** The grid's `index`-th point, first dimension varying slowest, in a fixed order. */
export const gridPoint = (space: Space, index: number): Point => {
  if (!Number.isInteger(index) || index < 0 || index >= gridSize(space)) {
    throw new RangeError(`grid index ${index} is outside 0..${gridSize(space) - 1}`)
  }
  const point: Record<string, Choice> = {}
  let rest = index
  for (let i = space.length - 1; i >= 0; i--) {
    const d = space[i]!
    point[d.name] = valueAt(d, rest % sizeOf(d))
    rest = Math.floor(rest / sizeOf(d))
  }
  return point
}

/** murmur3's 32-bit finaliser: a bijection of 32-bit integers that spreads every input bit over the output. */
const fmix32 = (x: number): number => {
  let h = x
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * Trial `index`'s generator: mulberry32 seeded by fmix32(fmix32(seed) ^ index), seed and index as
 * 32-bit integers. A trial's draws so depend on nothing but the search's seed and its own index,
 * and distinct indices of one seed get distinct seeds.
 */
const trialRandom = (seed: number, index: number) => mulberry32(fmix32(fmix32(seed) ^ index))

const randomPoint = (space: Space, random: () => number): Point =>
  Object.fromEntries(space.map((d) => [
    d.name,
    d.kind === "float" ? d.min + random() * (d.max - d.min) : valueAt(d, Math.floor(random() * sizeOf(d)))
  ]))

/** A univariate density of one dimension's values, to draw from and to score with (TPE's l(x) or g(x)). */
export interface Estimator {
  readonly sample: (random: () => number) => Choice
  readonly logPdf: (value: Choice) => number
}

const logSqrt2Pi = 0.5 * Math.log(2 * Math.PI)

/** The standard normal's mass between a and b, from whichever tail keeps it accurate far out. */
const mass = (a: number, b: number) => a > 0 ? normalCdf(-a) - normalCdf(-b) : normalCdf(b) - normalCdf(a)

const logSumExp = (xs: ReadonlyArray<number>) => {
  const top = Math.max(...xs)
  return top === -Infinity ? top : top + Math.log(xs.reduce((sum, x) => sum + Math.exp(x - top), 0))
}

/**
 * The Parzen estimator of a numeric dimension over the `observed` values, as Optuna's univariate
 * TPESampler builds it (optuna/samplers/_tpe/parzen_estimator.py of Optuna 5.0, defaults): one
 * Gaussian at each observation plus a prior one at the middle of the range with σ = the range, all
 * of equal weight. An observation's σ is the larger distance to its sorted neighbours (the
 * outermost take their one neighbour; a lone one the farther end of the range), clipped to
 * [range / min(100, 1 + kernels), range]. Each Gaussian is truncated to the range. An int's range
 * reaches half a step past both ends: a value's probability is its Gaussians' mass within half a
 * step of it, and a draw is rounded to the step grid. Exported for its test against Optuna's values.
 */
export const parzenEstimator = (d: NumericDimension, observed: ReadonlyArray<number>): Estimator => {
  const half = d.kind === "int" ? (d.step ?? 1) / 2 : 0
  const top = d.kind === "int" ? (valueAt(d, sizeOf(d) - 1) as number) : d.max
  const low = d.min - half
  const high = top + half
  const range = high - low
  // The mixture does not depend on the kernels' order, so they are kept sorted.
  const sorted = [...observed].sort((a, b) => a - b)
  const n = sorted.length
  const gap = (r: number) => r < 0 || r >= n - 1 ? 0 : sorted[r + 1]! - sorted[r]!
  const minSigma = range / Math.min(100, 2 + n)
  const sigmas = sorted.map((x, r) =>
    Math.min(range, Math.max(minSigma, n === 1 ? Math.max(x - low, high - x) : Math.max(gap(r - 1), gap(r))))
  )
  const mus = [...sorted, (low + high) / 2]
  sigmas.push(range)
  // Each Gaussian's log weight less the log of its mass within the range.
  const logScale = mus.map((mu, k) =>
    -Math.log(mus.length) - Math.log(mass((low - mu) / sigmas[k]!, (high - mu) / sigmas[k]!))
  )
  const snap = (x: number) =>
    d.kind === "int"
      ? (valueAt(d, Math.min(sizeOf(d) - 1, Math.max(0, Math.round((x - d.min) / (d.step ?? 1))))) as number)
      : x
  return {
    sample: (random) => {
      const k = Math.floor(random() * mus.length)
      const mu = mus[k]!
      const sigma = sigmas[k]!
      const from = normalCdf((low - mu) / sigma)
      const to = normalCdf((high - mu) / sigma)
      const x = mu + sigma * normalQuantile(from + random() * (to - from))
      // The quantile of a probability that rounds to 1 is Infinity: keep the draw in the range.
      return snap(Math.min(high, Math.max(low, x)))
    },
    logPdf: (value) => {
      const x = value as number
      return logSumExp(mus.map((mu, k) => {
        const sigma = sigmas[k]!
        const density = half === 0
          ? -(((x - mu) / sigma) ** 2) / 2 - logSqrt2Pi - Math.log(sigma)
          : Math.log(mass((x - half - mu) / sigma, (x + half - mu) / sigma))
        return logScale[k]! + density
      }))
    }
  }
}

/** A choice's estimator: each choice's count among the observed values plus a prior of 1 (hyperopt/tpe.py, `ap_categorical_sampler`). */
const categorical = (choices: ReadonlyArray<Choice>, observed: ReadonlyArray<Choice | undefined>): Estimator => {
  const counts = choices.map((c) => 1 + observed.filter((o) => o === c).length)
  const total = counts.reduce((sum, c) => sum + c, 0)
  return {
    sample: (random) => {
      let u = random() * total
      const k = counts.findIndex((c) => (u -= c) < 0)
      return choices[k === -1 ? choices.length - 1 : k]!
    },
    logPdf: (value) => Math.log(counts[choices.indexOf(value)]! / total)
  }
}

/** A dimension's estimator over the values the points give it, leaving out any that are outside it. */
const estimator = (d: Dimension, points: ReadonlyArray<Point>): Estimator => {
  const values = points.map((p) => p[d.name])
  if (d.kind === "choice") return categorical(d.choices, values)
  return parzenEstimator(d, values.filter((v): v is number => typeof v === "number" && v >= d.min && v <= d.max))
}

const candidatesPerTrial = 24

/**
 * The Tree-structured Parzen Estimator (Bergstra, Bardenet, Bengio, Kégl, "Algorithms for
 * Hyper-Parameter Optimization", NeurIPS 2011) with the choices of Optuna's TPESampler: the best
 * min(⌈0.1 n⌉, 25) of the n observations are "good" and the rest, failed ones included, "bad"; each
 * dimension gets l(x) from the good and g(x) from the bad. A trial draws 24 candidate points from
 * l and takes the one with the highest l(x)/g(x), the product of the dimensions' ratios (so
 * dimensions are modelled apart, as Optuna's univariate default, but chosen together).
 */
const tpe = (space: Space, observations: ReadonlyArray<Observation>) => {
  const finished = observations.filter((o) => o.objective !== null).sort((a, b) => b.objective! - a.objective!)
  const good = finished.slice(0, Math.min(Math.ceil(0.1 * observations.length), 25))
  const bad = observations.filter((o) => !good.includes(o))
  const estimators = space.map((d) => ({
    l: estimator(d, good.map((o) => o.point)),
    g: estimator(d, bad.map((o) => o.point))
  }))
  const score = (values: ReadonlyArray<Choice>) =>
    values.reduce<number>((sum, v, i) => sum + estimators[i]!.l.logPdf(v) - estimators[i]!.g.logPdf(v), 0)
  return (random: () => number): Point => {
    const candidates = Array.from({ length: candidatesPerTrial }, () => estimators.map((e) => e.l.sample(random)))
    const scores = candidates.map(score)
    // A NaN score (both densities 0) never wins.
    const best = scores.reduce((top, s, i) => s > scores[top]! ? i : top, 0)
    return Object.fromEntries(space.map((d, i) => [d.name, candidates[best]![i]!]))
  }
}

/**
 * The points of trials `from` .. `from + count - 1` of a search. grid: gridPoint(i) (fewer points when the range runs past the grid's end);
 * random: the i-th draw of a generator seeded by (seed, i) so a trial's point does not depend on the others;
 * tpe: the first `startup` trials (default 10) are random draws as above, the rest are chosen by the Tree-structured Parzen Estimator from `observations` (only finished ones).
 * Pure and deterministic: the same arguments give the same points.
 */
export const propose = (
  search: SearchKind,
  space: Space,
  options: {
    readonly seed: number
    readonly from: number
    readonly count: number
    readonly observations: ReadonlyArray<Observation>
    readonly startup?: number
  }
): ReadonlyArray<Point> => {
  const trials = Array.from({ length: options.count }, (_, k) => options.from + k)
  if (search === "grid") {
    return trials.filter((i) => i < gridSize(space)).map((i) => gridPoint(space, i))
  }
  const startup = search === "tpe" ? options.startup ?? 10 : Infinity
  const model = trials.some((i) => i >= startup) ? tpe(space, options.observations) : undefined
  return trials.map((i) => {
    const random = trialRandom(options.seed, i)
    return model === undefined || i < startup ? randomPoint(space, random) : model(random)
  })
}
