import {
  builtinFactors,
  type Candle,
  rankSymbols,
  type SymbolInputs,
  tableBars,
  winsorLimit
} from "@trading-platform/core"
import { randomWalk } from "../packages/core/test/ranking/ReferenceFactors.js"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 5)
const symbols = 24
const rounds = 3

/** 24 symbols of 500 hourly bars, with sampled market values for the microstructure factors. */
const universe: Array<SymbolInputs> = Array.from({ length: symbols }, (_, s) => ({
  symbol: `S${s}`,
  candles: randomWalk(tableBars, 1_000 + s, 10 + s),
  market: {
    funding_rate: (s % 7) * 1e-5,
    open_interest_change: null,
    taker_buy_ratio: 0.4 + (s % 5) * 0.05,
    depth_imbalance: (s % 9) / 10 - 0.4
  }
}))
const weighted = builtinFactors.map((f) => [f, 1] as const)

/**
 * The same table with the same arithmetic written out by hand: each symbol's columns copied into
 * typed arrays, every candle factor in straight loops over them (no helper calls, argument checks
 * or callbacks), then the same normalisation and weighted mean. The library's answer must match.
 */
const plainTable = (inputs: ReadonlyArray<SymbolInputs>) => {
  const nf = builtinFactors.length
  const values = builtinFactors.map(() => new Array<number | null>(inputs.length).fill(null))
  inputs.forEach((s, si) => {
    const n = s.candles.length
    const c = new Float64Array(n), h = new Float64Array(n), l = new Float64Array(n), v = new Float64Array(n)
    s.candles.forEach((b: Candle, i) => {
      c[i] = b.close
      h[i] = b.high
      l[i] = b.low
      v[i] = b.volume
    })
    const last = c[n - 1]!
    const out: Array<number | null> = []
    const rsi = (p: number) => {
      let gain = 0, loss = 0
      for (let i = 1; i <= p; i++) {
        const d = c[i]! - c[i - 1]!
        if (d > 0) gain += d
        else loss -= d
      }
      gain /= p
      loss /= p
      for (let i = p + 1; i < n; i++) {
        const d = c[i]! - c[i - 1]!
        gain = (gain * (p - 1) + Math.max(d, 0)) / p
        loss = (loss * (p - 1) + Math.max(-d, 0)) / p
      }
      return loss === 0 ? 100 : 100 - 100 / (1 + gain / loss)
    }
    const roc = (p: number) => (last - c[n - 1 - p]!) / c[n - 1 - p]! * 100
    const sma = (p: number) => {
      let sum = 0
      for (let i = n - p; i < n; i++) sum += c[i]!
      return sum / p
    }
    const ema = (p: number) => {
      const k = 2 / (p + 1)
      let e = c[0]!
      for (let i = 1; i < n; i++) e = c[i]! * k + e * (1 - k)
      return e
    }
    const highest = (p: number) => {
      let x = -Infinity
      for (let i = n - p; i < n; i++) x = Math.max(x, h[i]!)
      return x
    }
    const lowest = (p: number) => {
      let x = Infinity
      for (let i = n - p; i < n; i++) x = Math.min(x, l[i]!)
      return x
    }
    const slope = (p: number, y: (i: number) => number) => {
      const mid = (p - 1) / 2
      let sxy = 0, sxx = 0
      for (let j = 0; j < p; j++) {
        sxy += (j - mid) * y(j)
        sxx += (j - mid) * (j - mid)
      }
      return sxy / sxx
    }
    const bands = (p: number) => {
      const m = sma(p)
      let sq = 0
      for (let i = n - p; i < n; i++) sq += (c[i]! - m) * (c[i]! - m)
      const d = 2 * Math.sqrt(sq / p)
      return [m - d, m, m + d] as const
    }
    out.push(rsi(14), rsi(7), roc(10), roc(20))
    const hi14 = highest(14), lo14 = lowest(14)
    out.push(hi14 === lo14 ? null : (last - lo14) / (hi14 - lo14) * 100, roc(30))
    const s20 = sma(20), s50 = sma(50)
    out.push((last - s20) / s20 * 100, (last - s50) / s50 * 100)
    const e26 = ema(26)
    out.push((ema(12) - e26) / e26 * 100)
    {
      const kf = 2 / 13, ks = 2 / 27, k9 = 2 / 10
      let f = c[0]!, sl = c[0]!, sig = 0
      for (let i = 0; i < n; i++) {
        if (i > 0) {
          f = c[i]! * kf + f * (1 - kf)
          sl = c[i]! * ks + sl * (1 - ks)
        }
        if (i === 25) sig = f - sl
        else if (i > 25) sig = (f - sl) * k9 + sig * (1 - k9)
      }
      out.push((f - sl - sig) / last * 100)
    }
    {
      let plus = 0, minus = 0, sum = 0, a = 0
      for (let i = 1; i < n; i++) {
        const up = h[i]! - h[i - 1]!, down = l[i - 1]! - l[i]!
        const dp = up > down && up > 0 ? up : 0, dm = down > up && down > 0 ? down : 0
        if (i <= 14) {
          plus += dp
          minus += dm
        } else {
          plus = plus - plus / 14 + dp
          minus = minus - minus / 14 + dm
        }
        if (i < 14) continue
        const dx = plus + minus === 0 ? 0 : Math.abs(plus - minus) / (plus + minus) * 100
        if (i < 28) {
          sum += dx
          if (i === 27) a = sum / 14
        } else a = (a * 13 + dx) / 14
      }
      out.push(a)
    }
    out.push(slope(20, (j) => c[n - 20 + j]!) / s20 * 100)
    {
      let a = 0
      const tr = (i: number) => Math.max(h[i]! - l[i]!, Math.abs(h[i]! - c[i - 1]!), Math.abs(l[i]! - c[i - 1]!))
      for (let i = 1; i <= 14; i++) a += tr(i)
      a /= 14
      for (let i = 15; i < n; i++) a = (a * 13 + tr(i)) / 14
      out.push(a / last * 100)
    }
    const [lower, middle, upper] = bands(20)
    out.push((upper - lower) / middle * 100, upper === lower ? null : (last - lower) / (upper - lower))
    {
      let sum = 0, sq = 0
      for (let i = n - 20; i < n; i++) sum += (c[i]! - c[i - 1]!) / c[i - 1]!
      const m = sum / 20
      for (let i = n - 20; i < n; i++) {
        const x = (c[i]! - c[i - 1]!) / c[i - 1]! - m
        sq += x * x
      }
      out.push(Math.sqrt(sq / 20) * 100)
    }
    out.push((highest(20) - lowest(20)) / last * 100)
    {
      const obv = new Float64Array(20)
      let total = 0, volume = 0
      for (let i = n - 20; i < n; i++) {
        total += c[i]! > c[i - 1]! ? v[i]! : c[i]! < c[i - 1]! ? -v[i]! : 0
        volume += v[i]!
        obv[i - n + 20] = total
      }
      out.push(volume === 0 ? null : slope(20, (j) => obv[j]!) / (volume / 20))
    }
    {
      let sum = 0
      for (let i = n - 21; i < n - 1; i++) sum += v[i]!
      out.push(sum === 0 ? null : v[n - 1]! / (sum / 20))
    }
    {
      let pv = 0, vol = 0
      for (let i = n - 20; i < n; i++) {
        pv += (h[i]! + l[i]! + c[i]!) / 3 * v[i]!
        vol += v[i]!
      }
      const vwap = pv / vol
      out.push(vol === 0 ? null : (last - vwap) / vwap * 100)
    }
    {
      let up = 0, down = 0, prev = (h[n - 15]! + l[n - 15]! + c[n - 15]!) / 3
      for (let i = n - 14; i < n; i++) {
        const tp = (h[i]! + l[i]! + c[i]!) / 3
        if (tp > prev) up += tp * v[i]!
        else if (tp < prev) down += tp * v[i]!
        prev = tp
      }
      out.push(up + down === 0 ? null : down === 0 ? 100 : 100 - 100 / (1 + up / down))
    }
    out.push(
      s.market.funding_rate ?? null,
      s.market.open_interest_change ?? null,
      s.market.taker_buy_ratio ?? null,
      s.market.depth_imbalance ?? null
    )
    for (let f = 0; f < nf; f++) values[f]![si] = out[f]!
  })
  // Normalise each factor, flip where lower is better, and average.
  const score = new Float64Array(inputs.length), weight = new Float64Array(inputs.length)
  values.forEach((column, f) => {
    let count = 0, sum = 0, sq = 0
    for (const x of column) if (x !== null) (count++, sum += x)
    const mean = sum / count
    for (const x of column) if (x !== null) sq += (x - mean) * (x - mean)
    const sd = Math.sqrt(sq / count), sign = builtinFactors[f]!.higher_is === "better" ? 1 : -1
    column.forEach((x, i) => {
      if (x === null) return
      score[i]! += sign * (count < 2 || !(sd > 0) ? 0 : Math.max(-winsorLimit, Math.min(winsorLimit, (x - mean) / sd)))
      weight[i]! += 1
    })
  })
  return inputs.map((s, i) => ({ symbol: s.symbol, score: score[i]! / weight[i]! })).sort((a, b) => b.score - a.score)
}

const library = () => rankSymbols(universe, weighted).rows
const plain = () => plainTable(universe)

/** Tables per second over `seconds`. */
const measure = (f: () => unknown) => {
  let count = 0
  const started = performance.now()
  while (performance.now() - started < seconds * 1000) {
    f()
    count++
  }
  return count / ((performance.now() - started) / 1000)
}

export const run = async () => {
  const ours = library(), theirs = plain()
  const same = ours.length === theirs.length &&
    ours.every((row, i) => row.symbol === theirs[i]!.symbol && Math.abs(row.score - theirs[i]!.score) < 1e-9)
  // Warm-up, then measured runs taken in turns; the best of each.
  measure(library)
  measure(plain)
  const runs = { library: [] as Array<number>, plain: [] as Array<number> }
  for (let round = 0; round < rounds; round++) {
    runs.plain.push(measure(plain))
    runs.library.push(measure(library))
  }
  const best = { library: Math.max(...runs.library), plain: Math.max(...runs.plain) }
  const format = (n: number) => Math.round(n).toLocaleString("en")
  console.log(
    `The full ranking table: ${builtinFactors.length} factors, ${symbols} symbols, ${tableBars} bars each; best of ${rounds} runs of ${seconds} s in turns, after a warm-up\n`
  )
  console.log("| computation | tables/s (best) | tables/s (each run) | vs plain |")
  console.log("|---|---:|---:|---:|")
  console.log(
    `| plain loops over typed arrays (baseline) | ${format(best.plain)} | ${runs.plain.map(format).join(", ")} | 1.00 |`
  )
  console.log(
    `| \`rankSymbols\` (the ta helpers, normalisation, rows) | ${format(best.library)} | ${
      runs.library.map(format).join(", ")
    } | ${(best.library / best.plain).toFixed(2)} |`
  )
  console.log(`\nThe same order and scores (within 1e-9) from both: ${same}`)
}
