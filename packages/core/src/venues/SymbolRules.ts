import { maxLeverageAt } from "./MarginTiers.js"
import type { SymbolSpec } from "./Venue.js"

/** A decimal number exactly: `units × 10^-scale`. */
interface Decimal {
  readonly units: bigint
  readonly scale: number
}

// Binary floating point carries noise past the 15 significant figures a double holds (0.1 + 0.2 is
// 0.30000000000000004), so a number is read at 15 before it is rounded.
const significant = 15

const decimalOf = (x: number): Decimal => {
  const match = /^(-?)(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(x.toPrecision(significant))
  if (match === null) throw new RangeError(`Not a finite number: ${x}`)
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = match
  const units = BigInt(`${sign}${whole}${fraction}`)
  const scale = fraction.length - Number(exponent)
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 }
}

const unitsAt = (d: Decimal, scale: number): bigint => d.units * 10n ** BigInt(scale - d.scale)

const textOf = (d: Decimal): string => {
  if (d.units === 0n) return "0"
  const negative = d.units < 0n
  const digits = (negative ? -d.units : d.units).toString().padStart(d.scale + 1, "0")
  const whole = digits.slice(0, digits.length - d.scale)
  const fraction = digits.slice(digits.length - d.scale).replace(/0+$/, "")
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`
}

/** `x` as a whole number of `step`s, rounded down (towards -∞) or up, exactly. */
const toStep = (x: number, step: number, direction: "down" | "up"): Decimal => {
  const value = decimalOf(x)
  const unit = decimalOf(step)
  const scale = Math.max(value.scale, unit.scale)
  const v = unitsAt(value, scale)
  const s = unitsAt(unit, scale)
  if (s <= 0n) return value
  let steps = v / s
  const rest = v - steps * s
  if (direction === "down" && rest < 0n) steps -= 1n
  if (direction === "up" && rest > 0n) steps += 1n
  return { units: steps * s, scale }
}

/** A number as a plain decimal string (no exponent, no floating-point noise): `1e-7` is `0.0000001`. */
export const decimalString = (x: number): string => textOf(decimalOf(x))

/** The quantity as the venue must receive it: rounded down to the symbol's lot, as a decimal string. */
export const formatQuantity = (rules: SymbolSpec, quantity: number): string =>
  quantity > 0 ? textOf(toStep(quantity, rules.lot_size, "down")) : "0"

/** The quantity rounded down to the symbol's lot: 0.3917585066974925 in lots of 0.001 is 0.391. */
export const roundQuantity = (rules: SymbolSpec, quantity: number): number => Number(formatQuantity(rules, quantity))

/**
 * The price as the venue must receive it: on the symbol's tick, never worse for the order's side
 * than the price asked (a buy rounds down, a sell up), as a decimal string.
 */
export const formatPrice = (rules: SymbolSpec, price: number, side: "buy" | "sell"): string =>
  textOf(toStep(price, rules.tick_size, side === "buy" ? "down" : "up"))

/** The price on the symbol's tick, a buy's rounded down and a sell's up. */
export const roundPrice = (rules: SymbolSpec, price: number, side: "buy" | "sell"): number =>
  Number(formatPrice(rules, price, side))

/** An amount of quote currency to the cent, for messages. */
const usd = (x: number) => decimalString(Math.round(x * 100) / 100)

/** The highest leverage a position of `notional` may use on the symbol: its cap, and its bracket's. */
export const leverageCapAt = (rules: SymbolSpec, notional: number): number =>
  Math.min(rules.max_leverage, maxLeverageAt(rules.margin.tiers, notional))

/**
 * Why the venue would refuse the order, in one sentence, or null when it meets the symbol's rules:
 * its quantity (rounded down to the lot, as it is sent) below the minimum, its notional at `price`
 * below the minimum, or `leverage` above what the symbol allows at that notional.
 */
export const checkOrder = (
  rules: SymbolSpec,
  order: { readonly quantity: number; readonly price: number; readonly leverage: number }
): string | null => {
  const { symbol } = rules
  const quantity = roundQuantity(rules, order.quantity)
  if (!(quantity > 0) || quantity < rules.min_quantity) {
    const rounded = quantity === order.quantity ?
      "" :
      ` (${decimalString(order.quantity)} in lots of ${decimalString(rules.lot_size)})`
    return `Quantity ${decimalString(quantity)} ${symbol}${rounded} is below the minimum of ${
      decimalString(rules.min_quantity)
    } ${symbol}`
  }
  const notional = quantity * order.price
  if (notional < rules.min_notional) {
    return `Notional ${usd(notional)} USD (${decimalString(quantity)} ${symbol} at ${
      decimalString(order.price)
    }) is below ${symbol}'s minimum of ${decimalString(rules.min_notional)} USD`
  }
  const cap = leverageCapAt(rules, notional)
  if (order.leverage > cap) {
    return `Leverage ${decimalString(order.leverage)} is above ${symbol}'s cap of ${
      decimalString(cap)
    } at a notional of ${usd(notional)} USD`
  }
  return null
}
