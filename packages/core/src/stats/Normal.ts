/** The standard normal distribution: its CDF and its inverse, for the simulated market and the robustness figures. */

/**
 * The standard normal CDF Φ, by Hart's double-precision algorithm 5666 (Hart et al. 1968, as
 * written out in G. West, "Better approximations to cumulative normal functions", Wilmott 2005):
 * absolute error below 1e-14.
 */
export const normalCdf = (x: number): number => {
  const z = Math.abs(x)
  let tail: number
  if (z > 37) {
    tail = 0
  } else {
    const e = Math.exp(-(z * z) / 2)
    if (z < 7.07106781186547) {
      let num = 3.52624965998911e-2 * z + 0.700383064443688
      num = num * z + 6.37396220353165
      num = num * z + 33.912866078383
      num = num * z + 112.079291497871
      num = num * z + 221.213596169931
      num = num * z + 220.206867912376
      let den = 8.83883476483184e-2 * z + 1.75566716318264
      den = den * z + 16.064177579207
      den = den * z + 86.7807322029461
      den = den * z + 296.564248779674
      den = den * z + 637.333633378831
      den = den * z + 793.826512519948
      den = den * z + 440.413735824752
      tail = (e * num) / den
    } else {
      // The continued fraction of the tail.
      const fraction = z + 1 / (z + 2 / (z + 3 / (z + 4 / (z + 0.65))))
      tail = e / fraction / 2.506628274631
    }
  }
  return x > 0 ? 1 - tail : tail
}

const acklamA = [
  -39.69683028665376,
  220.9460984245205,
  -275.9285104469687,
  138.357751867269,
  -30.66479806614716,
  2.506628277459239
]
const acklamB = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572]
const acklamC = [
  -0.007784894002430293,
  -0.3223964580411365,
  -2.400758277161838,
  -2.549732539343734,
  4.374664141464968,
  2.938163982698783
]
const acklamD = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416]

const horner = (coefficients: ReadonlyArray<number>, x: number) => coefficients.reduce((sum, c) => sum * x + c, 0)

/**
 * P. J. Acklam's rational approximation of Φ⁻¹ (2003), for p in (0, 1): relative error below
 * 1.15e-9, with no logarithm outside the tails. Fast enough for a normal per simulated draw.
 */
export const acklam = (p: number): number => {
  const low = 0.02425
  if (p < low || p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(p < low ? p : 1 - p))
    const tail = horner(acklamC, q) / (horner(acklamD, q) * q + 1)
    return p < low ? tail : -tail
  }
  const q = p - 0.5
  const r = q * q
  return (horner(acklamA, r) * q) / (horner(acklamB, r) * r + 1)
}

/**
 * The inverse Φ⁻¹ of the standard normal CDF, for p in (0, 1): P. J. Acklam's rational
 * approximation (2003; relative error below 1.15e-9), refined by one step of Halley's method on
 * `normalCdf`, as Acklam suggests, to about full double precision.
 */
export const normalQuantile = (p: number): number => {
  if (p <= 0) return -Infinity
  if (p >= 1) return Infinity
  const x = acklam(p)
  const e = normalCdf(x) - p
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2)
  return x - u / (1 + (x * u) / 2)
}
