import { Schema } from "effect"

/**
 * The largest amount a request may give: of money (a capital, a balance, a fee, a profit), a price
 * or a quantity. No real account comes near it, and under it cash in exact 10⁻⁸ (`trading/Money.ts`,
 * which writes an amount with `toFixed`, exponent-free below 10²¹) keeps its cents exact as a double.
 */
export const maxAmount = 1e12

const limit = "1000000000000"

/** An amount that may be negative (a fee rebate, a loss): from -10¹² to 10¹². */
export const Amount = Schema.Number.pipe(
  Schema.finite(),
  Schema.between(-maxAmount, maxAmount, { message: () => `must be a number from -${limit} to ${limit}` })
)

/** An amount of 0 or more, at most 10¹² (an account's capital). */
export const NonNegativeAmount = Schema.Number.pipe(
  Schema.finite(),
  Schema.between(0, maxAmount, { message: () => `must be a number from 0 to ${limit}` })
)

/** An amount above 0, at most 10¹² (a balance, a price, a quantity). */
export const PositiveAmount = Schema.Number.pipe(
  Schema.finite(),
  Schema.greaterThan(0, { message: () => `must be a number above 0 and at most ${limit}` }),
  Schema.lessThanOrEqualTo(maxAmount, { message: () => `must be a number above 0 and at most ${limit}` })
)
