/** Ranks from 1, ties sharing the mean of the ranks they span. */
export const ranks = (values: ReadonlyArray<number>): Array<number> => {
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!)
  const out = new Array<number>(values.length)
  for (let start = 0; start < order.length;) {
    let end = start + 1
    while (end < order.length && values[order[end]!] === values[order[start]!]) end++
    for (let k = start; k < end; k++) out[order[k]!] = (start + 1 + end) / 2
    start = end
  }
  return out
}

const pearson = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>): number | null => {
  const n = xs.length
  let mx = 0, my = 0
  for (let i = 0; i < n; i++) {
    mx += xs[i]!
    my += ys[i]!
  }
  mx /= n
  my /= n
  let sxy = 0, sxx = 0, syy = 0
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx, dy = ys[i]! - my
    sxy += dx * dy
    sxx += dx * dx
    syy += dy * dy
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null
}

/** Spearman's rank correlation of paired values; null for fewer than three pairs or a constant side. */
export const spearman = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>): number | null =>
  xs.length < 3 ? null : pearson(ranks(xs), ranks(ys))

/**
 * Mean, t-statistic (mean over sample standard deviation / √n) and hit rate (share of
 * coefficients with the sign `higherIs` promises) of a series of coefficients.
 */
export const summarise = (ics: ReadonlyArray<number>, higherIs: "better" | "worse") => {
  const n = ics.length
  if (n === 0) return { bars: 0, mean: null, t_stat: null, hit_rate: null }
  const mean = ics.reduce((a, b) => a + b, 0) / n
  const sd = n < 2 ? 0 : Math.sqrt(ics.reduce((a, x) => a + (x - mean) * (x - mean), 0) / (n - 1))
  const hits = ics.filter((ic) => (higherIs === "better" ? ic > 0 : ic < 0)).length
  return { bars: n, mean, t_stat: sd > 0 ? mean / (sd / Math.sqrt(n)) : null, hit_rate: hits / n }
}
