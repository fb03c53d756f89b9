import { HttpClientRequest } from "@effect/platform"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { PlatformConfig, type VenueConnection } from "../config/PlatformConfig.js"
import { toSignificant } from "../stats/Significant.js"
import {
  defaultSimulationCorrelation,
  mix,
  simulatedSymbol,
  stringHash,
  uniform,
  universe
} from "../venues/SimulatedMarket.js"
import type { VenueFailure } from "../venues/Venue.js"
import { makeVenueClient, Num } from "../venues/VenueHttp.js"

/** One open position of a wallet: signed size in coins (negative is short) and entry price. */
export interface WalletPosition {
  readonly symbol: string
  readonly size: number
  readonly entry_price: number
}

/** A liquidation of the wallet's position on a symbol. */
export interface WalletLiquidation {
  readonly symbol: string
  readonly time: number
  readonly size: number
  readonly price: number
}

/** What venue1 shows of any wallet: its open positions now, and its recent liquidations. */
export interface WalletSnapshot {
  readonly positions: ReadonlyArray<WalletPosition>
  readonly liquidations: ReadonlyArray<WalletLiquidation>
}

/** Public position data of venue1 wallets, read for wallet tracking (no credentials needed). */
export class WalletActivity extends Context.Tag("@trading-platform/core/WalletActivity")<WalletActivity, {
  readonly snapshot: (address: string) => Effect.Effect<WalletSnapshot, VenueFailure>
}>() {}

const bucket = 5 * 60_000
// Liquidations older than this are no longer reported (a tracker syncs far more often).
const liquidationHorizon = 12

/**
 * Simulated wallets, on the simulated venue1's market (the same seed and correlation): each address
 * follows three symbols of the simulated universe; every five minutes each position is redrawn
 * (flat, long or short, of some size) as a pure function of seed, address, symbol and time, and a
 * position that goes flat is sometimes a liquidation.
 */
export const simulatedWalletActivity = (seed: number, correlation = defaultSimulationCorrelation) => {
  const symbols = Object.keys(universe)
  const wallet = (address: string) => {
    const key = mix(seed ^ stringHash(address.toLowerCase()))
    const followed = [0, 1, 2].map((i) => symbols[Math.floor(uniform(key, i, 20) * symbols.length)]!)
    return [...new Set(followed)].map((symbol) => {
      const k = mix(key ^ stringHash(symbol))
      const market = simulatedSymbol(seed, symbol, "venue1", correlation)!
      const size = (b: number) => {
        if (uniform(k, b, 11) < 0.35) return 0
        const coins = toSignificant((10_000 + 90_000 * uniform(k, b, 12)) / market.reference, 4)
        return uniform(k, b, 13) < 0.5 ? coins : -coins
      }
      return { symbol, market, k, size }
    })
  }
  return {
    snapshot: (address: string) =>
      Effect.map(Clock.currentTimeMillis, (now): WalletSnapshot => {
        const b = Math.floor(now / bucket)
        const positions: Array<WalletPosition> = []
        const liquidations: Array<WalletLiquidation> = []
        for (const { k, market, size, symbol } of wallet(address)) {
          const current = size(b)
          if (current !== 0) positions.push({ symbol, size: current, entry_price: market.price(b * bucket) })
          for (let i = b - liquidationHorizon + 1; i <= b; i++) {
            const before = size(i - 1)
            if (before !== 0 && size(i) === 0 && uniform(k, i, 14) < 0.3) {
              liquidations.push({ symbol, time: i * bucket, size: before, price: market.price(i * bucket) })
            }
          }
        }
        return { positions, liquidations }
      })
  }
}

const ClearinghouseState = Schema.Struct({
  assetPositions: Schema.Array(Schema.Struct({
    position: Schema.Struct({ coin: Schema.String, szi: Num, entryPx: Schema.NullOr(Num) })
  }))
})
const UserFills = Schema.Array(Schema.Struct({
  coin: Schema.String,
  px: Num,
  sz: Num,
  side: Schema.Literal("B", "A"),
  time: Schema.Number,
  liquidation: Schema.optional(Schema.Struct({ liquidatedUser: Schema.NullOr(Schema.String) }))
}))

/**
 * venue1's `/info`: `clearinghouseState` for the positions and `userFills` for liquidations (fills
 * that carry a `liquidation` of this user; the position's size is signed by the side it closed).
 */
export const httpWalletActivity = (connection: VenueConnection) =>
  Effect.map(makeVenueClient("venue1", connection), (http) => {
    const info = <A, I>(body: Record<string, unknown>, schema: Schema.Schema<A, I>) =>
      Effect.flatMap(
        http.send(HttpClientRequest.post(`${http.baseUrl}/info`).pipe(HttpClientRequest.bodyUnsafeJson(body))),
        (reply) => http.decode(reply, schema)
      )
    return {
      snapshot: (address: string) =>
        Effect.map(
          Effect.all([
            info({ type: "clearinghouseState", user: address }, ClearinghouseState),
            info({ type: "userFills", user: address }, UserFills)
          ], {
            concurrency: 2
          }),
          ([state, fills]): WalletSnapshot => ({
            positions: state.assetPositions
              .filter(({ position }) => position.szi !== 0)
              .map(({ position }) => ({
                symbol: position.coin,
                size: position.szi,
                entry_price: position.entryPx ?? 0
              })),
            liquidations: fills
              .filter((f) =>
                f.liquidation !== undefined && f.liquidation.liquidatedUser?.toLowerCase() === address.toLowerCase()
              )
              // Selling closes a long, buying closes a short.
              .map((f) => ({ symbol: f.coin, time: f.time, size: f.side === "A" ? f.sz : -f.sz, price: f.px }))
          })
        )
    }
  })

/** venue1's wallets as configured: the simulation (default) or its HTTP API. */
export const WalletActivityLive = Layer.effect(
  WalletActivity,
  Effect.flatMap(PlatformConfig, ({ venues }) =>
    venues.venue1.mode === "http"
      ? httpWalletActivity(venues.venue1)
      : Effect.succeed(simulatedWalletActivity(venues.simulationSeed, venues.simulationCorrelation)))
)
