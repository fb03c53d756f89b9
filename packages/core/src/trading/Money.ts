/**
 * Cash as exact decimals: integers of 10⁻⁸ of the quote currency (the precision both venues
 * settle USD stablecoins in). Every amount that moves cash (a fee, a margin, a profit, a funding
 * payment) is rounded to it once, where the rulebook computes it, so sums are exact: the ledger's
 * numeric columns and a backtest's balance add the same decimals, and a balance never drifts to
 * `-1.4e-12`.
 */
export type Money = bigint

const digits = 8

/** `x` rounded to the nearest 10⁻⁸ (`toFixed` rounds the double's exact value, the same way everywhere). */
export const toMoney = (x: number): Money => {
  const fixed = x.toFixed(digits)
  return BigInt(fixed.replace(".", ""))
}

/** The decimal text of an amount, for a numeric column or an answer: `-12.34000000`. */
export const moneyText = (m: Money): string => {
  const negative = m < 0n
  const text = (negative ? -m : m).toString().padStart(digits + 1, "0")
  return `${negative ? "-" : ""}${text.slice(0, -digits)}.${text.slice(-digits)}`
}

/** The double nearest an amount (as a numeric column reads back). */
export const fromMoney = (m: Money): number => Number(moneyText(m))

/** `x` rounded to 10⁻⁸, as a double. */
export const roundMoney = (x: number): number => fromMoney(toMoney(x))
