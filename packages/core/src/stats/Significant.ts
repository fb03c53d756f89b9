/** Powers of ten a double holds exactly (10^0 to 10^22). */
const exact = Array.from({ length: 23 }, (_, k) => 10 ** k)

/**
 * `Number(x.toPrecision(digits))`, the double nearest `x` rounded to `digits` significant figures
 * (1 to 15), without making and reading the text: prices, sizes and amounts are rounded so on every
 * candle, fill and quote, and the text costs ten times the arithmetic.
 *
 * The same double, bit for bit: `x` times an exact power of ten, with `digits` figures before the
 * point, is rounded once, and rounding never carries a value across a half (which a double below
 * 2^52 holds exactly), only onto it; away from a computed half, rounding it to an integer picks the
 * integer `toPrecision` picks. That integer and the power are exact, so one division or
 * multiplication rounds once, as reading the decimal does. On a half, and outside the powers a
 * double holds, the text decides.
 */
export const toSignificant = (x: number, digits: number): number => {
  if (x === 0) return 0
  const a = Math.abs(x)
  const k = digits - 1 - Math.floor(Math.log10(a))
  if (k >= -22 && k <= 22) {
    const scaled = k >= 0 ? a * exact[k]! : a / exact[-k]!
    const whole = Math.floor(scaled)
    const fraction = scaled - whole
    // Next to a power of ten log10 can land one off: the text decides then too.
    if (whole >= exact[digits - 1]! && whole < exact[digits]! && fraction !== 0.5) {
      const n = fraction > 0.5 ? whole + 1 : whole
      const rounded = k >= 0 ? n / exact[k]! : n * exact[-k]!
      return x < 0 ? -rounded : rounded
    }
  }
  return Number(x.toPrecision(digits))
}
