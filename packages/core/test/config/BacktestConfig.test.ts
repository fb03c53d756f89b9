import { describe, expect, it } from "@effect/vitest"
import { platformConfig } from "@trading-platform/core"
import { ConfigProvider, Duration, Effect } from "effect"

const load = (env: Record<string, string>) =>
  Effect.withConfigProvider(platformConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("backtest job settings", () => {
  it.effect("default to 2 workers, a 30 s fallback poll, a 30 s lease and 3 attempts; each variable sets its value", () =>
    Effect.gen(function*() {
      expect((yield* load({})).backtests).toEqual({
        concurrency: 2,
        pollInterval: Duration.millis(30_000),
        lease: Duration.millis(30_000),
        maxAttempts: 3
      })
      const c = yield* load({
        BACKTEST_CONCURRENCY: "0",
        BACKTEST_POLL_INTERVAL_MS: "250",
        BACKTEST_LEASE_MS: "5000",
        BACKTEST_MAX_ATTEMPTS: "5"
      })
      expect(c.backtests).toEqual({
        concurrency: 0,
        pollInterval: Duration.millis(250),
        lease: Duration.millis(5000),
        maxAttempts: 5
      })
    }))

  it.effect("invalid values stop with a message naming the variable", () =>
    Effect.gen(function*() {
      for (
        const [name, value] of [
          ["BACKTEST_CONCURRENCY", "-1"],
          ["BACKTEST_CONCURRENCY", "65"],
          ["BACKTEST_POLL_INTERVAL_MS", "0"],
          ["BACKTEST_LEASE_MS", "999"],
          ["BACKTEST_MAX_ATTEMPTS", "zero"]
        ] as const
      ) {
        expect(String(yield* Effect.flip(load({ [name]: value })))).toContain(name)
      }
    }))
})
