import { describe, expect, it } from "@effect/vitest"
import { platformConfig } from "@trading-platform/core"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"
import { defaultMarginTables } from "../../src/venues/MarginTiers.js"

const load = (env: Record<string, string>) =>
  Effect.withConfigProvider(platformConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("secret and venue settings", () => {
  it.effect("DATABASE_URL without SECRET_KEY stops with a message naming SECRET_KEY", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load({ DATABASE_URL: "postgres://db/x" }))
      expect(String(error)).toContain("SECRET_KEY")
      const short = yield* Effect.flip(load({ SECRET_KEY: "too short" }))
      expect(String(short)).toContain("SECRET_KEY")
    }))

  it.effect("invalid venue settings name their variable", () =>
    Effect.gen(function*() {
      for (
        const [name, value] of [["VENUE1_MODE", "live"], ["VENUE2_BASE_URL", "not a url"], ["VENUE1_RETRIES", "-1"], [
          "MARKET_DATA_TTL_MS",
          "0"
        ]]
      ) {
        expect(String(yield* Effect.flip(load({ [name!]: value! })))).toContain(name)
      }
    }))

  it.effect("venues default to the simulation; http mode reads URL, timeout, retries and freshness", () =>
    Effect.gen(function*() {
      const defaults = yield* load({})
      expect(defaults.venues.venue1.mode).toBe("simulated")
      expect(defaults.venues.venue2.mode).toBe("simulated")
      const c = yield* load({
        DATABASE_URL: "postgres://db/x",
        SECRET_KEY: "k".repeat(32),
        VENUE2_MODE: "http",
        VENUE2_BASE_URL: "http://127.0.0.1:8080/",
        VENUE2_TIMEOUT_MS: "1500",
        VENUE2_RETRIES: "0",
        MARKET_DATA_TTL_MS: "250"
      })
      expect(Redacted.value(Option.getOrThrow(c.secretKey))).toBe("k".repeat(32))
      expect(c.venues.venue2).toEqual({
        mode: "http",
        baseUrl: "http://127.0.0.1:8080",
        timeout: Duration.millis(1500),
        retries: 0
      })
      expect(Duration.toMillis(c.venues.marketDataTtl)).toBe(250)
    }))
})

describe("margin tier settings", () => {
  it.effect("default to the documented tables; VENUE*_MARGIN_TIERS and VENUE*_LIQUIDATION_FEE_RATE replace them", () =>
    Effect.gen(function*() {
      const defaults = yield* load({})
      expect(defaults.venues.marginTables).toEqual(defaultMarginTables)
      const tiers = [{ notional_floor: 0, max_leverage: 20, maintenance_rate: 0.025 }, {
        notional_floor: 1_000_000,
        max_leverage: 10,
        maintenance_rate: 0.05
      }]
      const c = yield* load({ VENUE2_MARGIN_TIERS: JSON.stringify(tiers), VENUE1_LIQUIDATION_FEE_RATE: "0.01" })
      expect(c.venues.marginTables).toEqual({
        venue1: { ...defaultMarginTables.venue1, liquidation_fee_rate: 0.01 },
        venue2: { tiers, liquidation_fee_rate: defaultMarginTables.venue2.liquidation_fee_rate }
      })
    }))

  it.effect("a bad table stops with one sentence naming its variable", () =>
    Effect.gen(function*() {
      for (
        const [name, value, why] of [
          ["VENUE1_MARGIN_TIERS", "not json", /must be a JSON array of tiers/],
          ["VENUE2_MARGIN_TIERS", "[]", /at least one tier/],
          ["VENUE2_MARGIN_TIERS", `[{"notional_floor":10,"max_leverage":5,"maintenance_rate":0.1}]`, /floor is 0/],
          [
            "VENUE2_MARGIN_TIERS",
            `[{"notional_floor":0,"max_leverage":5,"maintenance_rate":0.1},{"notional_floor":0,"max_leverage":2,"maintenance_rate":0.2}]`,
            /rising/
          ],
          ["VENUE1_MARGIN_TIERS", `[{"notional_floor":0,"max_leverage":0.5,"maintenance_rate":0.1}]`, /max_leverage/],
          ["VENUE2_LIQUIDATION_FEE_RATE", "2", /from 0 to 1/]
        ] as const
      ) {
        const message = String(yield* Effect.flip(load({ [name]: value })))
        expect(message).toContain(name)
        expect(message).toMatch(why)
        expect(message).not.toContain("\n")
      }
    }))
})
