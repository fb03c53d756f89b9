import { toSignificant } from "../stats/Significant.js"
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

/** A step as a whole number of units of 10^-scale, its trailing zeros dropped (0.001 is 1 at scale 3). */
const unitsOfStep = (step: number): { readonly units: number; readonly scale: number } => {
  let { scale, units } = decimalOf(step)
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n
    scale--
  }
  return { units: Number(units), scale }
}

// A run sizes every order on the same few lots.
const stepUnits = new Map<number, ReturnType<typeof unitsOfStep>>()

/**
 * The quantity rounded down to the symbol's lot: 0.3917585066974925 in lots of 0.001 is 0.391.
 * In floating point where the quotient lies clearly between two whole numbers of lots (its error,
 * about 10^-15 of it, is far inside the margin), which answers the same number as the exact path:
 * the lots times the lot's units is an exact integer, and dividing it by a power of ten rounds once,
 * as reading the decimal back does. Otherwise, near a whole number of lots, exactly by the digits.
 */
export const roundQuantity = (rules: SymbolSpec, quantity: number): number => {
  const lot = rules.lot_size
  // Without a lot (a symbol the venue does not list), the quantity as read at 15 figures.
  if (!(lot > 0) && Number.isFinite(quantity)) return quantity > 0 ? toSignificant(quantity, significant) : 0
  const lots = quantity / lot
  const whole = Math.floor(lots)
  const margin = lots * 1e-12
  if (quantity > 0 && lots < 2 ** 40 && lots - whole > margin && whole + 1 - lots > margin) {
    let step = stepUnits.get(lot)
    if (step === undefined) {
      if (stepUnits.size >= 64) stepUnits.clear()
      stepUnits.set(lot, step = unitsOfStep(lot))
    }
    const units = whole * step.units
    if (Number.isSafeInteger(units) && step.scale <= 22) return units / 10 ** step.scale
  }
  return Number(formatQuantity(rules, quantity))
}

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

/** An order as the symbol's rules judge it. */
export interface OrderTerms {
  readonly quantity: number
  readonly price: number
  readonly leverage: number
}

/** The rule an order breaks, with the figures that judged it. */
export type Breach =
  | { readonly rule: "quantity"; readonly quantity: number }
  | { readonly rule: "notional"; readonly quantity: number; readonly notional: number }
  | { readonly rule: "leverage"; readonly notional: number; readonly cap: number }

/**
 * The rule the venue would refuse the order by, or null when it meets the symbol's rules: its
 * quantity (rounded down to the lot, as it is sent) below the minimum, its notional at `price`
 * below the minimum, or `leverage` above what the symbol allows at that notional.
 */
export const orderBreach = (rules: SymbolSpec, order: OrderTerms): Breach | null => {
  const quantity = roundQuantity(rules, order.quantity)
  if (!(quantity > 0) || quantity < rules.min_quantity) return { rule: "quantity", quantity }
  const notional = quantity * order.price
  if (notional < rules.min_notional) return { rule: "notional", quantity, notional }
  const cap = leverageCapAt(rules, notional)
  return order.leverage > cap ? { rule: "leverage", notional, cap } : null
}

/** Why the venue would refuse the order, in one sentence. */
export const refusalOf = (rules: SymbolSpec, order: OrderTerms, breach: Breach): string => {
  const { symbol } = rules
  switch (breach.rule) {
    case "quantity": {
      const rounded = breach.quantity === order.quantity ?
        "" :
        ` (${decimalString(order.quantity)} in lots of ${decimalString(rules.lot_size)})`
      return `Quantity ${decimalString(breach.quantity)} ${symbol}${rounded} is below the minimum of ${
        decimalString(rules.min_quantity)
      } ${symbol}`
    }
    case "notional":
      return `Notional ${usd(breach.notional)} USD (${decimalString(breach.quantity)} ${symbol} at ${
        decimalString(order.price)
      }) is below ${symbol}'s minimum of ${decimalString(rules.min_notional)} USD`
    case "leverage":
      return `Leverage ${decimalString(order.leverage)} is above ${symbol}'s cap of ${
        decimalString(breach.cap)
      } at a notional of ${usd(breach.notional)} USD`
  }
}

/** Why the venue would refuse the order, in one sentence (see `orderBreach`), or null when it meets the symbol's rules. */
export const checkOrder = (rules: SymbolSpec, order: OrderTerms): string | null => {
  const breach = orderBreach(rules, order)
  return breach === null ? null : refusalOf(rules, order, breach)
}
