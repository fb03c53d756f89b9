import { describe, expect, it } from "@effect/vitest"
import { platformConfig } from "@trading-platform/core"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"

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
