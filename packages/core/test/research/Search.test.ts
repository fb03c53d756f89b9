import { describe, expect, it } from "@effect/vitest"
import {
  gridPoint,
  gridSize,
  type NumericDimension,
  type Observation,
  parzenEstimator,
  type Point,
  propose,
  type Space
} from "../../src/research/Search.js"
import { mulberry32 } from "../../src/stats/Random.js"

const mixed: Space = [
  { name: "a", kind: "int", min: 1, max: 6, step: 2 },
  { name: "b", kind: "float", min: 0, max: 1, steps: 3 },
  { name: "c", kind: "choice", choices: ["x", true] }
]

const wide: Space = [
  { name: "n", kind: "int", min: 2, max: 20, step: 3 },
  { name: "m", kind: "int", min: -5, max: 5 },
  { name: "w", kind: "float", min: 0.5, max: 3 },
  { name: "side", kind: "choice", choices: ["long", "short", "both"] }
]

/** What is wrong with each point: a missing or extra name, a value outside its range, off its step or not a choice. */
const problems = (space: Space, points: ReadonlyArray<Point>) =>
  points.flatMap((point, i) => {
    const found = space.flatMap((d) => {
      const v = point[d.name]
      const ok = d.kind === "choice"
        ? v !== undefined && d.choices.includes(v)
        : typeof v === "number" && v >= d.min && v <= d.max &&
          (d.kind === "float" || Number.isInteger((v - d.min) / (d.step ?? 1)))
      return ok ? [] : [`point ${i}: ${d.name} = ${JSON.stringify(v)}`]
    })
    return Object.keys(point).length === space.length ? found : [...found, `point ${i}: names ${Object.keys(point)}`]
  })

const mean = (xs: ReadonlyArray<number>) => xs.reduce((sum, x) => sum + x, 0) / xs.length

/** Runs `trials` trials one at a time, each proposed from the observations of those before it. */
const runSequentially = (space: Space, seed: number, trials: number, objective: (p: Point) => number) => {
  const observations: Array<Observation> = []
  for (let i = 0; i < trials; i++) {
    const [point] = propose("tpe", space, { seed, from: i, count: 1, observations })
    observations.push({ point: point!, objective: objective(point!) })
  }
  return observations
}

describe("gridSize and gridPoint", () => {
  it("list a mixed space with the first dimension slowest, an int by its step up to max, a float's steps including both ends", () => {
    expect(gridSize(mixed)).toBe(18)
    const points = Array.from({ length: 18 }, (_, i) => gridPoint(mixed, i))
    expect(points).toEqual([
      { a: 1, b: 0, c: "x" },
      { a: 1, b: 0, c: true },
      { a: 1, b: 0.5, c: "x" },
      { a: 1, b: 0.5, c: true },
      { a: 1, b: 1, c: "x" },
      { a: 1, b: 1, c: true },
      { a: 3, b: 0, c: "x" },
      { a: 3, b: 0, c: true },
      { a: 3, b: 0.5, c: "x" },
      { a: 3, b: 0.5, c: true },
      { a: 3, b: 1, c: "x" },
      { a: 3, b: 1, c: true },
      { a: 5, b: 0, c: "x" },
      { a: 5, b: 0, c: true },
      { a: 5, b: 0.5, c: "x" },
      { a: 5, b: 0.5, c: true },
      { a: 5, b: 1, c: "x" },
      { a: 5, b: 1, c: true }
    ])
  })

  it("gives a float's ends exactly and 10 steps by default", () => {
    // min + (max - min) · t would end at 2.9000000000000004.
    const space: Space = [{ name: "f", kind: "float", min: 0.7, max: 2.9, steps: 4 }]
    const values = Array.from({ length: gridSize(space) }, (_, i) => gridPoint(space, i).f as number)
    expect(values).toHaveLength(4)
    expect(values[0]).toBe(0.7)
    expect(values[1]).toBeCloseTo(0.7 + 2.2 / 3, 14)
    expect(values[2]).toBeCloseTo(0.7 + 4.4 / 3, 14)
    expect(values[3]).toBe(2.9)
    const byDefault: Space = [{ name: "f", kind: "float", min: 0, max: 9 }]
    expect(gridSize(byDefault)).toBe(10)
    expect(gridPoint(byDefault, 9)).toEqual({ f: 9 })
    expect(gridPoint(byDefault, 4).f).toBeCloseTo(4, 12)
  })

  it("the 10x10 grid fast 5..50 step 5 by slow 20..200 step 20 has 100 points from (5, 20) to (50, 200)", () => {
    const space: Space = [
      { name: "fast", kind: "int", min: 5, max: 50, step: 5 },
      { name: "slow", kind: "int", min: 20, max: 200, step: 20 }
    ]
    expect(gridSize(space)).toBe(100)
    expect(gridPoint(space, 0)).toEqual({ fast: 5, slow: 20 })
    expect(gridPoint(space, 1)).toEqual({ fast: 5, slow: 40 })
    expect(gridPoint(space, 10)).toEqual({ fast: 10, slow: 20 })
    expect(gridPoint(space, 99)).toEqual({ fast: 50, slow: 200 })
    const all = propose("grid", space, { seed: 1, from: 0, count: 100, observations: [] })
    expect(new Set(all.map((p) => `${p.fast}/${p.slow}`)).size).toBe(100)
  })

  it("propose on a grid gives gridPoint of each trial and stops at the grid's end", () => {
    const points = propose("grid", mixed, { seed: 1, from: 16, count: 5, observations: [] })
    expect(points).toEqual([gridPoint(mixed, 16), gridPoint(mixed, 17)])
    expect(() => gridPoint(mixed, 18)).toThrow(RangeError)
  })
})

describe("random search", () => {
  it("gives the same points for the same seed and other points for another", () => {
    const options = { seed: 42, from: 0, count: 20, observations: [] }
    const first = propose("random", wide, options)
    expect(propose("random", wide, options)).toEqual(first)
    expect(propose("random", wide, { ...options, seed: 43 })).not.toEqual(first)
    // Trials of one search differ from each other.
    expect(new Set(first.map((p) => p.w)).size).toBe(20)
  })

  it("gives a trial the same point however the trials are sliced", () => {
    const whole = propose("random", wide, { seed: 7, from: 0, count: 40, observations: [] })
    const sliced = [
      ...propose("random", wide, { seed: 7, from: 0, count: 13, observations: [] }),
      ...propose("random", wide, { seed: 7, from: 13, count: 27, observations: [] })
    ]
    expect(sliced).toEqual(whole)
    expect(propose("random", wide, { seed: 7, from: 25, count: 1, observations: [] })).toEqual([whole[25]])
  })

  it("keeps every value in its range and on its step, and reaches every int value and choice about equally", () => {
    const points = propose("random", wide, { seed: 3, from: 0, count: 3000, observations: [] })
    expect(problems(wide, points)).toEqual([])
    const countOf = (name: string, value: unknown) => points.filter((p) => p[name] === value).length
    for (const side of ["long", "short", "both"]) {
      expect(countOf("side", side)).toBeGreaterThan(900)
      expect(countOf("side", side)).toBeLessThan(1100)
    }
    for (const n of [2, 5, 8, 11, 14, 17, 20]) expect(countOf("n", n)).toBeGreaterThan(350)
    for (let m = -5; m <= 5; m++) expect(countOf("m", m)).toBeGreaterThan(200)
    const ws = points.map((p) => p.w as number)
    expect(Math.min(...ws)).toBeLessThan(0.51)
    expect(Math.max(...ws)).toBeGreaterThan(2.99)
  })
})

describe("parzenEstimator", () => {
  // Reference log densities from Optuna 5.0.0's univariate estimator, with TPESampler's defaults:
  //   p = _ParzenEstimatorParameters(prior_weight=1.0, consider_magic_clip=True,
  //         consider_endpoints=False, weights=default_weights, multivariate=False)
  //   _ParzenEstimator({"x": np.array(observed)}, {"x": distribution}, p).log_pdf({"x": np.array(xs)})
  const logPdfs = (d: NumericDimension, observed: ReadonlyArray<number>, xs: ReadonlyArray<number>) =>
    xs.map(parzenEstimator(d, observed).logPdf)
  const expectClose = (actual: ReadonlyArray<number>, expected: ReadonlyArray<number>) => {
    expect(actual).toHaveLength(expected.length)
    actual.forEach((a, i) => expect(a).toBeCloseTo(expected[i]!, 12))
  }

  it("gives Optuna's log densities of a float over several observations, one, and none", () => {
    const d: NumericDimension = { name: "x", kind: "float", min: 0, max: 10 }
    // FloatDistribution(0, 10)
    expectClose(
      logPdfs(d, [3.02, 3.04, 2.93, 7.5, 0.2], [0, 1, 3, 4.5, 9.99]),
      [-2.255275930098553, -2.064367424264549, -1.8638655552901822, -2.1138261843601303, -3.1712141032353727]
    )
    expectClose(logPdfs(d, [8], [0, 8, 10]), [-2.5215200779344236, -2.2399798016659256, -2.293738180387346])
    expectClose(logPdfs(d, [], [0, 5]), [-2.386607292503096, -2.261607292503096])
  })

  it("gives Optuna's log probabilities of an int's steps", () => {
    // IntDistribution(5, 50, step=5)
    expectClose(
      logPdfs({ name: "x", kind: "int", min: 5, max: 50, step: 5 }, [25, 25, 20, 50], [5, 10, 25, 50]),
      [-2.90210992855838, -2.5062555092230863, -1.8915547691607353, -2.734768064071085]
    )
    // IntDistribution(1, 7, step=3): Optuna's high is the top of the step grid, as 1..8 by 3 has.
    expectClose(
      logPdfs({ name: "x", kind: "int", min: 1, max: 8, step: 3 }, [1, 7], [1, 4, 7]),
      [-1.126075706531196, -1.0458495931539848, -1.126075706531196]
    )
  })

  it("draws only values in the range, an int's on its steps", () => {
    const d: NumericDimension = { name: "x", kind: "int", min: 5, max: 50, step: 5 }
    const random = mulberry32(1)
    const estimator = parzenEstimator(d, [5, 5, 50])
    const draws = Array.from({ length: 500 }, () => ({ x: estimator.sample(random) }))
    expect(problems([d], draws)).toEqual([])
  })
})

describe("tpe search", () => {
  const observed = propose("random", wide, { seed: 5, from: 0, count: 12, observations: [] })
    .map((point, i) => ({ point, objective: i % 4 === 0 ? null : -Math.abs((point.n as number) - 11) }))

  it("draws its first `startup` trials (10 by default) as random search does, and the rest otherwise", () => {
    const random = propose("random", wide, { seed: 9, from: 0, count: 15, observations: [] })
    const tpe = propose("tpe", wide, { seed: 9, from: 0, count: 15, observations: observed, startup: 10 })
    expect(tpe.slice(0, 10)).toEqual(random.slice(0, 10))
    for (let i = 10; i < 15; i++) expect(tpe[i]).not.toEqual(random[i])
    expect(propose("tpe", wide, { seed: 9, from: 0, count: 10, observations: observed })).toEqual(random.slice(0, 10))
    expect(propose("tpe", wide, { seed: 9, from: 0, count: 11, observations: observed })[10]).not.toEqual(random[10])
  })

  // Measured on trials TPE chose one after another once 30 observations existed, as a search runs:
  // the points of one fixed set of observations all come from one l(x)/g(x), whose peak can sit in
  // a gap between bad points.
  it("maximising -(x - 3)^2 over 0..10, its trials 30..49 lie far nearer 3 than random search's", () => {
    const space: Space = [{ name: "x", kind: "float", min: 0, max: 10 }]
    const distance = (points: ReadonlyArray<Point>) => mean(points.map((p) => Math.abs((p.x as number) - 3)))
    for (const seed of [1, 2, 3, 4, 5]) {
      const tpe = runSequentially(space, seed, 50, (p) => -(((p.x as number) - 3) ** 2)).slice(30).map((o) => o.point)
      const random = propose("random", space, { seed, from: 30, count: 20, observations: [] })
      expect(problems(space, tpe)).toEqual([])
      // Uniform on 0..10 is on average 2.9 from 3.
      expect(distance(random)).toBeGreaterThan(2)
      expect(distance(tpe)).toBeLessThan(1.2)
      expect(distance(tpe)).toBeLessThan(distance(random) / 2)
    }
  })

  it("on an int with a step and a choice, its trials 10..39 favour the best value and choice and stay on the grid", () => {
    const space: Space = [
      { name: "fast", kind: "int", min: 5, max: 50, step: 5 },
      { name: "side", kind: "choice", choices: ["long", "short", "both"] }
    ]
    const objective = (p: Point) => -(((p.fast as number) - 25) ** 2) / 100 + (p.side === "short" ? 3 : 0)
    const distance = (points: ReadonlyArray<Point>) => mean(points.map((p) => Math.abs((p.fast as number) - 25)))
    const short = (points: ReadonlyArray<Point>) => points.filter((p) => p.side === "short").length
    for (const seed of [1, 2, 3]) {
      const tpe = runSequentially(space, seed, 40, objective).slice(10).map((o) => o.point)
      const random = propose("random", space, { seed, from: 10, count: 30, observations: [] })
      expect(problems(space, tpe)).toEqual([])
      expect(distance(tpe)).toBeLessThan(0.75 * distance(random))
      expect(short(tpe)).toBeGreaterThan(2 * short(random))
    }
  })

  it("still proposes valid points when every trial failed, and when there are no observations", () => {
    const failed = propose("random", wide, { seed: 2, from: 0, count: 20, observations: [] })
      .map((point) => ({ point, objective: null }))
    const points = propose("tpe", wide, { seed: 2, from: 20, count: 50, observations: failed })
    expect(problems(wide, points)).toEqual([])
    expect(new Set(points.map((p) => p.w)).size).toBe(50)
    const blind = propose("tpe", wide, { seed: 2, from: 0, count: 50, observations: [], startup: 0 })
    expect(problems(wide, blind)).toEqual([])
  })

  it("gives the same points for the same arguments", () => {
    const options = { seed: 8, from: 12, count: 30, observations: observed }
    const first = propose("tpe", wide, options)
    expect(propose("tpe", wide, options)).toEqual(first)
    expect(propose("tpe", wide, { ...options, seed: 18 })).not.toEqual(first)
  })
})
