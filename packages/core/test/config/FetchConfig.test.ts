import { describe, expect, it } from "@effect/vitest"
import { platformConfig } from "@trading-platform/core"
import { ConfigProvider, Effect } from "effect"

const load = (env: Record<string, string>) =>
  Effect.withConfigProvider(platformConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("fetch settings", () => {
  it.effect("allow no internal host and cap a feed at 5 MiB by default; each variable sets its value", () =>
    Effect.gen(function*() {
      const defaults = yield* load({})
      expect(defaults.fetch).toEqual({ allowHosts: [] })
      expect(defaults.news.maxBytes).toBe(5 * 1024 * 1024)
      const c = yield* load({ FETCH_ALLOW_HOSTS: " 127.0.0.1, Feeds.Internal ,::1,,", NEWS_MAX_BYTES: "1024" })
      expect(c.fetch).toEqual({ allowHosts: ["127.0.0.1", "feeds.internal", "[::1]"] })
      expect(c.news.maxBytes).toBe(1024)
    }))

  it.effect("invalid values stop with a message naming the variable", () =>
    Effect.gen(function*() {
      for (
        const [name, value] of [
          ["FETCH_ALLOW_HOSTS", "127.0.0.1:8080"],
          ["FETCH_ALLOW_HOSTS", "feeds.internal/rss"],
          ["NEWS_MAX_BYTES", "0"],
          ["NEWS_MAX_BYTES", "lots"]
        ] as const
      ) {
        const error = yield* Effect.flip(load({ [name]: value }))
        expect(String(error)).toContain(name)
      }
    }))
})
