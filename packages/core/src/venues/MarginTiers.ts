import { Schema } from "effect"

/**
 * One bracket of a venue's margin table: from `notional_floor` (a position's notional, in quote
 * currency) up to the next bracket's floor, a position may use at most `max_leverage` and must keep
 * `maintenance_rate` of its notional (less the bracket's deduction, see `maintenanceMargin`).
 */
export const MarginTier = Schema.Struct({
  notional_floor: Schema.Number.pipe(Schema.nonNegative()),
  max_leverage: Schema.Number.pipe(Schema.greaterThanOrEqualTo(1)),
  maintenance_rate: Schema.Number.pipe(Schema.between(0, 1))
})
export type MarginTier = typeof MarginTier.Type

/**
 * A venue's brackets as configured: at least one, the first at notional 0, floors rising. The
 * message is the one sentence a bad `VENUE1_MARGIN_TIERS` / `VENUE2_MARGIN_TIERS` answers.
 */
export const MarginTiers = Schema.Array(MarginTier).pipe(
  Schema.filter((tiers) =>
    tiers.length === 0
      ? "must list at least one tier"
      : tiers[0]!.notional_floor !== 0
      ? "must start with a tier whose notional_floor is 0"
      : tiers.every((t, i) => i === 0 || t.notional_floor > tiers[i - 1]!.notional_floor)
      ? undefined
      : "must list tiers by rising notional_floor"
  )
)

/** A venue's margin rules: its brackets, lowest first (the first at 0), and the fee a liquidation pays. */
export const MarginTable = Schema.Struct({
  tiers: MarginTiers,
  /** Charged on a liquidation's notional, never more than the margin the position has left. */
  liquidation_fee_rate: Schema.Number.pipe(Schema.between(0, 1))
})
export type MarginTable = typeof MarginTable.Type

const tier = (notional_floor: number, max_leverage: number, maintenance_rate: number): MarginTier => ({
  notional_floor,
  max_leverage,
  maintenance_rate
})

/**
 * The defaults, documented in docs/trading-rules.md. venue2 follows Binance's USDⓈ-M BTCUSDT
 * brackets; venue1 follows Hyperliquid, whose maintenance margin is half the initial margin at the
 * bracket's leverage, and which charges no fee of its own on a liquidation.
 */
// Keyed by the venues' names, not by `Exchange`: configuration reads these below the venues' layer.
export const defaultMarginTables: Readonly<Record<"venue1" | "venue2", MarginTable>> = {
  venue1: {
    tiers: [tier(0, 50, 0.01), tier(150_000_000, 20, 0.025)],
    liquidation_fee_rate: 0
  },
  venue2: {
    tiers: [
      tier(0, 125, 0.004),
      tier(50_000, 100, 0.005),
      tier(600_000, 75, 0.0065),
      tier(3_000_000, 50, 0.01),
      tier(12_000_000, 25, 0.02),
      tier(70_000_000, 20, 0.025),
      tier(100_000_000, 10, 0.05),
      tier(230_000_000, 5, 0.1),
      tier(480_000_000, 4, 0.125),
      tier(600_000_000, 3, 0.15),
      tier(800_000_000, 2, 0.25),
      tier(1_200_000_000, 1, 0.5)
    ],
    liquidation_fee_rate: 0.0125
  }
}

/** The bracket a position of `notional` falls in. */
export const tierAt = (tiers: ReadonlyArray<MarginTier>, notional: number): MarginTier => {
  let found = tiers[0]!
  for (const t of tiers) if (notional >= t.notional_floor) found = t
  return found
}

/**
 * The margin a position of `notional` must keep: each bracket's rate applies to the part of the
 * notional inside it (the venues' "maintenance amount" deduction), so the requirement grows
 * continuously with size rather than jumping at a bracket's floor.
 */
export const maintenanceMargin = (tiers: ReadonlyArray<MarginTier>, notional: number): number => {
  let margin = 0
  for (let i = 0; i < tiers.length; i++) {
    const from = tiers[i]!.notional_floor
    if (notional <= from) break
    const to = Math.min(notional, tiers[i + 1]?.notional_floor ?? Infinity)
    margin += (to - from) * tiers[i]!.maintenance_rate
  }
  return margin
}

/** The highest leverage a position of `notional` may use. */
export const maxLeverageAt = (tiers: ReadonlyArray<MarginTier>, notional: number): number =>
  tierAt(tiers, notional).max_leverage

/**
 * The table of a symbol whose leverage the venue caps at `maxLeverage`: no bracket allows more,
 * and a bracket the cap lowers keeps at least half the initial margin at the capped leverage as
 * maintenance (the rule both venues' own tables follow), so a position opened at the cap is not
 * liquidated at once.
 */
export const capMarginTable = (table: MarginTable, maxLeverage: number): MarginTable => ({
  ...table,
  tiers: table.tiers.map((t) =>
    t.max_leverage <= maxLeverage ? t : {
      ...t,
      max_leverage: maxLeverage,
      maintenance_rate: Math.max(t.maintenance_rate, 1 / (2 * maxLeverage))
    }
  )
})
