import { describe, expect, it } from "@effect/vitest"
import { combinations, cscv, type ScoredTrial, sensitivity } from "../../src/research/Overfitting.js"
import type { Space } from "../../src/research/Search.js"

/*
 * The reference values of the three-trial case come from this Python 3 transcription of the
 * paper's §2.2 steps, written apart from this code (statistics.stdev is the n − 1 deviation):
 *
 *   from itertools import combinations
 *   from math import log
 *   from statistics import mean, stdev
 *   def sr(xs): s = stdev(xs); return mean(xs) / s if s > 0 else 0.0
 *   def cscv(M, S):
 *       N = len(M); T = len(M[0]); b = T // S; skip = T - b * S
 *       blocks = [list(range(skip + k * b, skip + (k + 1) * b)) for k in range(S)]
 *       lam = []; pairs = []
 *       for c in combinations(range(S), S // 2):
 *           J = [i for k in c for i in blocks[k]]
 *           Jb = [i for k in range(S) if k not in c for i in blocks[k]]
 *           R = [sr([M[n][i] for i in J]) for n in range(N)]
 *           Rb = [sr([M[n][i] for i in Jb]) for n in range(N)]
 *           ns = R.index(max(R))
 *           below = sum(1 for x in Rb if x < Rb[ns]); ties = sum(1 for x in Rb if x == Rb[ns])
 *           w = (below + (ties + 1) / 2) / (N + 1)
 *           lam.append(log(w / (1 - w))); pairs.append((R[ns], Rb[ns]))
 *       mi = mean(p[0] for p in pairs); mo = mean(p[1] for p in pairs)
 *       slope = sum((a - mi) * (b - mo) for a, b in pairs) / sum((a - mi) ** 2 for a, b in pairs)
 *       return (sum(1 for l in lam if l <= 0) / len(lam), sorted(lam), slope, mo - slope * mi,
 *               sum(1 for a, b in pairs if b < 0) / len(pairs))
 */

describe("combinations", () => {
  it("takes every half of the blocks once, C(S, S/2) of them", () => {
    expect(combinations(4, 2)).toEqual([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    expect(combinations(16, 8)).toHaveLength(12_870)
  })
})

describe("cscv", () => {
  it("two trials, two blocks, by hand: each half's best is the other half's worst, so PBO is 1", () => {
    // Block 0 in sample: A = [.01, .03] has SR .02/.01414 = 1.4142 above B = [0, .02]'s .7071, so n* = A.
    // Out of sample (block 1): A = [-.01, .01] has SR 0, B = [.02, .04] 2.1213: A ranks 1 of 2,
    // ω̄ = 1/3, λ = ln(1/2). The other way, n* = B (2.1213 above 0) ranks 1 of 2 in block 0 (.7071
    // below 1.4142). The (IS, OOS) pairs (1.4142, 0) and (2.1213, .7071) lie on a line of slope 1
    // and intercept −√2.
    const figures = cscv({
      partitions: 2,
      returns: [[0.01, 0.03, -0.01, 0.01], [0, 0.02, 0.02, 0.04]]
    })!
    expect(figures).toMatchObject({ partitions: 2, periods: 4, trials: 2, combinations: 2 })
    expect(figures.probability_of_overfitting).toBe(1)
    for (const logit of Object.values(figures.logits)) expect(logit).toBeCloseTo(Math.log(0.5), 12)
    expect(figures.degradation.slope).toBeCloseTo(1, 12)
    expect(figures.degradation.intercept).toBeCloseTo(-Math.SQRT2, 12)
    expect(figures.degradation.probability_of_loss).toBe(0)
  })

  it("three trials, four blocks, the first period dropped: the paper's steps in Python give the same figures", () => {
    const rows = [
      [-0.01, 0.01, -0.0, 0.01, 0.01, -0.03, -0.03, 0.03],
      [-0.01, -0.01, 0.04, 0.0, 0.03, 0.0, 0.01, -0.02],
      [0.01, 0.03, 0.01, 0.02, 0.02, -0.03, 0.02, 0.01]
    ]
    // T = 9 is not a multiple of S = 4: the earliest period goes, however large.
    const figures = cscv({ partitions: 4, returns: rows.map((row) => [0.9, ...row]) })!
    expect(figures).toMatchObject({ partitions: 4, periods: 8, trials: 3, combinations: 6 })
    // λ is ±ln 3 for the best and worst of 3 out of sample and 0 for the middle, which counts as overfit.
    expect(figures.probability_of_overfitting).toBeCloseTo(4 / 6, 12)
    expect(figures.logits.p5).toBeCloseTo(-1.0986122886681098, 12)
    expect(figures.logits.p25).toBeCloseTo(-0.8239592165010823, 12)
    expect(figures.logits.p50).toBeCloseTo(0, 12)
    expect(figures.logits.p75).toBeCloseTo(0.8239592165010823, 12)
    expect(figures.logits.p95).toBeCloseTo(1.0986122886681098, 12)
    expect(figures.degradation.slope).toBeCloseTo(-0.4168086453112843, 12)
    expect(figures.degradation.intercept).toBeCloseTo(1.0161223385257845, 12)
    expect(figures.degradation.probability_of_loss).toBeCloseTo(1 / 6, 12)
  })

  it("a trial that does not vary has a Sharpe ratio of 0, and equal ones share their rank", () => {
    // Two flat trials: each half picks the first (the earliest of equals), tied with the other out of
    // sample: rank 1.5 of 2, ω̄ = 1/2, λ = 0, overfit by the paper's λ ≤ 0.
    const figures = cscv({ partitions: 2, returns: [[0, 0, 0, 0], [0, 0, 0, 0]] })!
    expect(figures.probability_of_overfitting).toBe(1)
    expect(figures.logits.p50).toBe(0)
    expect(figures.degradation.slope).toBeNull()
  })

  it("has nothing to say with one trial, or fewer than two returns in sample", () => {
    expect(cscv({ partitions: 2, returns: [[0.01, 0.02, 0.03, 0.04]] })).toBeUndefined()
    expect(cscv({ partitions: 4, returns: [[0.01, 0.02, 0.03], [0.01, 0.02, 0.03]] })).toBeUndefined()
    expect(cscv({ partitions: 2, returns: [[0.01, 0.02], [0.02, 0.01]] })).toBeUndefined()
  })
})

describe("sensitivity", () => {
  const grid: Space = [
    { name: "fast", kind: "int", min: 3, max: 9, step: 3 },
    { name: "slow", kind: "int", min: 20, max: 40, step: 10 }
  ]
  // Objectives of the grid's points by fast (rows) and slow (columns); the best is fast 6, slow 30.
  const table: Record<number, Array<number | null>> = { 3: [1, 8, 2], 6: [9, 10, null], 9: [3, 5, 4] }
  const trials: Array<ScoredTrial> = [3, 6, 9].flatMap((fast) =>
    [20, 30, 40].map((slow, i) => ({ params: { fast, slow, size: 0.5 }, objective: table[fast]![i]! }))
  )

  it("a grid's neighbours are the points one step either side with the other parameters the best's", () => {
    expect(sensitivity(grid, "grid", trials, { fast: 6, slow: 30 }, 10)).toEqual([
      {
        parameter: "fast",
        values: [{ value: 3, objective: 8 }, { value: 6, objective: 10 }, { value: 9, objective: 5 }],
        // Fast 9 loses half the objective: (5 − 10) / 10.
        change_percent: -50
      },
      {
        parameter: "slow",
        values: [{ value: 20, objective: 9 }, { value: 30, objective: 10 }, { value: 40, objective: null }],
        // Slow 40 broke a constraint: only slow 20 counts, (9 − 10) / 10.
        change_percent: -10
      }
    ])
  })

  it("a drawn float matches within 1% of its range, and every other choice is a neighbour", () => {
    const space: Space = [
      { name: "size", kind: "float", min: 0, max: 2 },
      { name: "mode", kind: "choice", choices: ["a", "b", "c"] }
    ]
    const drawn: Array<ScoredTrial> = [
      { params: { size: 1, mode: "b" }, objective: -4 },
      { params: { size: 1.015, mode: "a" }, objective: -5 },
      { params: { size: 0.99, mode: "c" }, objective: -6 },
      { params: { size: 1.05, mode: "a" }, objective: -100 },
      { params: { size: 0.5, mode: "b" }, objective: -8 },
      { params: { size: 1.9, mode: "b" }, objective: -2 }
    ]
    const [size, mode] = sensitivity(space, "random", drawn, { size: 1, mode: "b" }, -4)
    expect(size!.values.map((v) => v.value)).toEqual([0.5, 1, 1.9])
    // −4 to −8 below is a fall of 100% of |−4|; −2 above is a rise of 50%.
    expect(size!.change_percent).toBe(-100)
    // Size 1.015 and 0.99 are within 0.02 of 1; 1.05 is not.
    expect(mode!.values).toEqual([
      { value: "a", objective: -5 },
      { value: "b", objective: -4 },
      { value: "c", objective: -6 }
    ])
    expect(mode!.change_percent).toBe(-50)
  })

  it("without a neighbour, or with a best objective of 0, there is no change to give", () => {
    const [fast] = sensitivity(grid, "grid", [trials[4]!], { fast: 6, slow: 30 }, 10)
    expect(fast).toEqual({ parameter: "fast", values: [{ value: 6, objective: 10 }], change_percent: null })
    expect(sensitivity(grid, "grid", trials, { fast: 6, slow: 30 }, 0)[0]!.change_percent).toBeNull()
  })
})
