import { describe, expect, it } from "@effect/vitest"
import {
  deflatedSharpe,
  expectedMaxSharpe,
  monteCarlo,
  type MonteCarloInput,
  percentile,
  probabilisticSharpe,
  returnMoments
} from "../../src/backtests/Robustness.js"
import { acklam, normalCdf, normalQuantile } from "../../src/stats/Normal.js"
import { mulberry32 } from "../../src/stats/Random.js"

// Reference values from Python 3 (`statistics.NormalDist`, `statistics.quantiles`), computed
// independently of this code; the scripts are in the comments.

const run = (pnls: ReadonlyArray<number>, overrides: Partial<MonteCarloInput> = {}) =>
  monteCarlo({ pnls, initialBalance: 1000, runs: 1000, seed: 7, method: "reshuffle", ruinPercent: 50, ...overrides })

describe("mulberry32", () => {
  it("gives the reference sequence of its seed", () => {
    // A port to Python of the same 32-bit steps, seed 42.
    const random = mulberry32(42)
    expect([random(), random(), random()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099])
  })
})

describe("percentile", () => {
  it("interpolates between the closest ranks (type 7)", () => {
    // statistics.quantiles([1, 2, 3, 4], n=4, method="inclusive") == [1.75, 2.5, 3.25]
    expect([25, 50, 75].map((p) => percentile([1, 2, 3, 4], p))).toEqual([1.75, 2.5, 3.25])
    // statistics.quantiles(range(1, 12), n=20, method="inclusive")[0] == 1.5
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 5)).toBe(1.5)
    expect(percentile([4], 95)).toBe(4)
  })
})

describe("monteCarlo", () => {
  it("reshuffle keeps the final return and moves the drawdown: +500 then -300 on 1000 falls 20% from 1500, -300 first falls 30%", () => {
    const figures = run([500, -300])
    // Both orders end at 1200: +20%.
    for (const value of Object.values(figures.final_return_percent)) expect(value).toBeCloseTo(20, 12)
    // Half the runs each way: the outer percentiles are the two drawdowns.
    expect(figures.max_drawdown_percent.p5).toBeCloseTo(20, 12)
    expect(figures.max_drawdown_percent.p25).toBeCloseTo(20, 12)
    expect(figures.max_drawdown_percent.p75).toBeCloseTo(30, 12)
    expect(figures.max_drawdown_percent.p95).toBeCloseTo(30, 12)
    expect(figures.probability_of_ruin).toBe(0)
  })

  it("reshuffle of four trades: every drawdown is one of the permutations', the worst (25%: -200, -50 first) at p95", () => {
    // The 24 orders of [100, -200, 300, -50] on 1000 give these maximum drawdowns (itertools.permutations).
    const possible = [
      14.814814814814813,
      15.384615384615385,
      16,
      17.857142857142858,
      18.181818181818183,
      19.047619047619047,
      19.230769230769234,
      20,
      22.727272727272727,
      25
    ]
    const figures = run([100, -200, 300, -50])
    for (const value of Object.values(figures.final_return_percent)) expect(value).toBeCloseTo(15, 12)
    // 4 of the 24 orders (1/6 of the runs) fall 25%, so p95 is exactly that.
    expect(figures.max_drawdown_percent.p95).toBeCloseTo(25, 12)
    const { p25, p5, p50, p75, p95 } = figures.max_drawdown_percent
    expect([p5, p25, p50, p75, p95]).toEqual([p5, p25, p50, p75, p95].sort((a, b) => a - b))
    expect(p5).toBeGreaterThanOrEqual(possible[0]!)
  })

  it("resample repeats with its seed and changes with another; a single trade draws itself every time", () => {
    const pnls = [120, -80, 45, -200, 310, -15, 60]
    const once = run(pnls, { method: "resample", seed: 123 })
    expect(run(pnls, { method: "resample", seed: 123 })).toEqual(once)
    expect(run(pnls, { method: "resample", seed: 124 })).not.toEqual(once)
    // Drawn with replacement, the final return varies around the total's +24%.
    expect(once.final_return_percent.p5).toBeLessThan(24)
    expect(once.final_return_percent.p95).toBeGreaterThan(24)
    const single = run([100], { method: "resample" })
    expect(single.final_return_percent).toEqual({ p5: 10, p25: 10, p50: 10, p75: 10, p95: 10 })
    expect(single.max_drawdown_percent).toEqual({ p5: 0, p25: 0, p50: 0, p75: 0, p95: 0 })
  })

  it("ruin: reaching the threshold exactly counts, a cent above does not, and no trades never ruin", () => {
    expect(run([-500]).probability_of_ruin).toBe(1)
    expect(run([-499.99]).probability_of_ruin).toBe(0)
    expect(run([-499.99], { ruinPercent: 40 }).probability_of_ruin).toBe(1)
    // A loss of the whole balance is ruin at 100%; one short of it is not.
    expect(run([-1000], { ruinPercent: 100 }).probability_of_ruin).toBe(1)
    expect(run([-999], { ruinPercent: 100 }).probability_of_ruin).toBe(0)
    // Ruin is measured on the path, not the end: -600 first reaches 400 before +700 lifts it.
    expect(run([-600, 700]).probability_of_ruin).toBeCloseTo(0.5, 1)
    expect(run([]).final_return_percent.p50).toBe(0)
    expect(run([]).probability_of_ruin).toBe(0)
  })

  it("resample ruin is the share of drawn paths that reach it: +100/-600 ruins unless both draws are +100 (3/4)", () => {
    // 1000 + 100 - 600 = 500 is the threshold itself; -600 first is 400.
    const figures = run([100, -600], { method: "resample", runs: 10_000 })
    // Binomial standard deviation √(0.75 · 0.25 / 10000) ≈ 0.0043.
    expect(Math.abs(figures.probability_of_ruin - 0.75)).toBeLessThan(0.02)
  })
})

describe("normal distribution", () => {
  it("Φ matches Python's NormalDist().cdf", () => {
    const reference: Array<[number, number]> = [
      [-3, 0.0013498980316301035],
      [-1.96, 0.024997895148220428],
      [-0.5, 0.3085375387259869],
      [0, 0.5],
      [0.3, 0.6179114221889526],
      [1, 0.8413447460685429],
      [2.5, 0.9937903346742238],
      [6, 0.9999999990134123]
    ]
    for (const [x, p] of reference) expect(Math.abs(normalCdf(x) - p)).toBeLessThan(1e-14)
    // Far in the tail Python's 1 + erf loses the digits: Φ(-8) from 0.5 · math.erfc(8 / √2), to 1e-8 relative.
    expect(normalCdf(-8) / 6.220960574271819e-16).toBeCloseTo(1, 7)
  })

  it("Φ⁻¹ matches Python's NormalDist().inv_cdf (Wichura's AS241)", () => {
    const reference: Array<[number, number]> = [
      [0.001, -3.090232306167813],
      [0.01, -2.3263478740408408],
      [0.025, -1.9599639845400538],
      [0.3, -0.5244005127080407],
      [0.5, 0],
      [0.8, 0.8416212335729144],
      [0.975, 1.9599639845400536],
      [0.999, 3.090232306167813]
    ]
    for (const [p, x] of reference) expect(Math.abs(normalQuantile(p) - x)).toBeLessThan(1e-12)
    expect(Math.abs(normalQuantile(1e-10) - -6.361340902404056)).toBeLessThan(1e-9)
    // Acklam's approximation alone, which the simulated market draws with, keeps its published
    // relative error, in the tails too (a wrong tail coefficient once made it 1e-5 there).
    for (const [p, x] of reference) expect(Math.abs(acklam(p) - x)).toBeLessThanOrEqual(1.2e-9 * Math.abs(x))
  })
})

describe("deflated Sharpe ratio", () => {
  it("reproduces the paper's example: SR 2.5 a year over T=1250 days, skew -3, kurtosis 10, 100 trials of variance 1/2 a year", () => {
    // Bailey & López de Prado (2014), section 4: E[max SR] = 0.1132 a day and DSR = 0.9004.
    // Python: sqrt(0.5/250) * ((1-γ) inv_cdf(1-1/100) + γ inv_cdf(1-1/(100e))) = 0.11317200186513214,
    // cdf((SR - 0.113172) sqrt(1249) / sqrt(1 + 3 SR + 9/4 SR²)) = 0.9003968344493904 with SR = 2.5/√250.
    const moments = { count: 1250, sharpe: 2.5 / Math.sqrt(250), skewness: -3, kurtosis: 10 }
    const figures = deflatedSharpe(moments, 100, 0.5 / 250)
    expect(figures.expected_max_sharpe).toBeCloseTo(0.11317200186513214, 12)
    expect(figures.deflated_sharpe).toBeCloseTo(0.9003968344493904, 10)
    expect(figures.probabilistic_sharpe).toBeCloseTo(0.9999968595078976, 10)
  })

  it("of one trial is the probabilistic Sharpe ratio against 0", () => {
    expect(expectedMaxSharpe(1, 0)).toBe(0)
    const moments = { count: 100, sharpe: 0.1, skewness: 0, kurtosis: 3 }
    const figures = deflatedSharpe(moments, 1, 0)
    expect(figures.deflated_sharpe).toBe(figures.probabilistic_sharpe)
    // Normal returns: cdf(0.1 · √99 / √(1 + 0.5 · 0.01)) = 0.8395254171844497
    expect(figures.probabilistic_sharpe).toBeCloseTo(probabilisticSharpe(0.1, 0, 100, 0, 3), 15)
    expect(figures.probabilistic_sharpe).toBeCloseTo(0.8395254171844497, 12)
  })

  it("reads the Sharpe ratio, skewness and kurtosis of returns as Python computes them", () => {
    // m = mean(r); sd = statistics.stdev(r); skew = m3 / m2^1.5 and kurt = m4 / m2² with population moments.
    const r = [0.01, -0.02, 0.015, 0.003, -0.007, 0.022, -0.011, 0.004, 0.009, -0.001, 0.012, -0.005]
    const moments = returnMoments(r)!
    expect(moments.count).toBe(12)
    expect(moments.sharpe).toBeCloseTo(0.21589769261436914, 13)
    expect(moments.skewness).toBeCloseTo(-0.2572535104469716, 13)
    expect(moments.kurtosis).toBeCloseTo(2.344245836198208, 13)
    const one = deflatedSharpe(moments, 1, 0)
    expect(one.probabilistic_sharpe).toBeCloseTo(0.7554822965678013, 12)
    // Ten trials of variance 0.04: E[max SR] = 0.31491966026915, DSR = 0.37550201502523395.
    const ten = deflatedSharpe(moments, 10, 0.04)
    expect(ten.expected_max_sharpe).toBeCloseTo(0.31491966026915, 12)
    expect(ten.deflated_sharpe).toBeCloseTo(0.37550201502523395, 12)
  })

  it("has nothing to read in fewer than two returns or returns that do not vary", () => {
    expect(returnMoments([0.01])).toBeUndefined()
    expect(returnMoments([0.01, 0.01, 0.01])).toBeUndefined()
  })
})
