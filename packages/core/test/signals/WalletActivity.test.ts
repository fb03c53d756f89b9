import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { httpWalletActivity, type VenueConnection } from "@trading-platform/core"
import { type FakeVenue, startFakeVenue1 } from "@trading-platform/core/testing"
import { Duration, Effect } from "effect"

const connection = (baseUrl: string): VenueConnection => ({
  mode: "http",
  baseUrl,
  timeout: Duration.seconds(1),
  retries: 0
})
const wallet = `0x${"ab".repeat(20)}`

let fake: FakeVenue
beforeAll(async () => {
  fake = await startFakeVenue1()
})
afterAll(() => fake.close())

describe("wallet activity over venue1's HTTP API", () => {
  it.effect("reads any wallet's positions from clearinghouseState and its liquidations from userFills", () =>
    Effect.gen(function*() {
      fake.behavior = "ok"
      const wallets = yield* httpWalletActivity(connection(fake.url))
      const snapshot = yield* wallets.snapshot(wallet)
      expect(snapshot).toEqual({
        positions: [{ symbol: "ETH", size: -2.5, entry_price: 3100 }],
        // The liquidated long (closed by a sell) keeps its sign; the ordinary fill is not a liquidation.
        liquidations: [{ symbol: "BTC", time: 2_000, size: 0.4, price: 61_000 }]
      })
      expect(fake.last.body).toEqual({ type: "userFills", user: wallet })
    }))

  it.effect("a venue that fails answers the venue's failure, for the engine to count", () =>
    Effect.gen(function*() {
      const wallets = yield* httpWalletActivity(connection(fake.url))
      fake.behavior = "unavailable503"
      expect((yield* Effect.flip(wallets.snapshot(wallet)))._tag).toBe("Unavailable")
      fake.behavior = "garbage"
      expect((yield* Effect.flip(wallets.snapshot(wallet)))._tag).toBe("UpstreamError")
      fake.behavior = "ok"
    }))
})
