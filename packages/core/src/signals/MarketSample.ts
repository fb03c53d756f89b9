import { Schema } from "effect"
import { Exchange } from "../venues/Venue.js"

/**
 * What the sampler reads from a venue for one symbol in one round. Volumes and depths are in
 * quote currency (USD); open interest in coins, as the venues report it.
 */
export const MarketSample = Schema.Struct({
  exchange: Exchange,
  symbol: Schema.String,
  /** Epoch milliseconds of the round that took it. */
  sampled_at: Schema.Number,
  price: Schema.Number,
  /** Quote volume of the 24 hours before the sample (the venue's ticker). */
  volume_24h: Schema.Number,
  open_interest: Schema.Number,
  /** Funding rate per period, as a fraction (0.0001 = 0.01 %). */
  funding_rate: Schema.Number,
  /** Quote volume of trades since the previous sample (at most one sampling interval back) whose taker bought. */
  taker_buy_volume: Schema.Number,
  /** Quote volume of trades since the previous sample whose taker sold. */
  taker_sell_volume: Schema.Number,
  /** Quote value resting in the top `depthLevels` bid levels. */
  bid_depth: Schema.Number,
  /** Quote value resting in the top `depthLevels` ask levels. */
  ask_depth: Schema.Number
})
export type MarketSample = typeof MarketSample.Type

/** Order-book levels per side summed into a sample's depth. */
export const depthLevels = 20
