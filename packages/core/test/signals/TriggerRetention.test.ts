import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { PlatformLive, platformOptions } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const retention = {
  ...platformOptions().retention,
  purgeInterval: Duration.hours(1),
  triggers: Option.some(Duration.days(1))
}

layer(PlatformLive.pipe(Layer.provideMerge(TestConfig(testStorages[0], { retention }))), { timeout: "120 seconds" })(
  "trigger log retention",
  (it) => {
    it.effect("triggers that fired longer ago than TRIGGER_RETENTION_DAYS are purged; recent ones stay", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const at = (ms: number) => new Date(ms)
        const [user] = yield* sql<{ id: number }>`
        INSERT INTO users (email, username, password_hash, created_at, updated_at)
        VALUES ('t@example.com', 'trigger_owner', 'x', ${at(0)}, ${at(0)}) RETURNING id`
        const [pool] = yield* sql<{ id: number }>`
        INSERT INTO signal_pools (user_id, exchange, pool_name, source_type, source_config, symbols, logic, enabled, created_at, updated_at)
        VALUES (${user!.id}, 'venue1', 'p', 'market_signals', '{}', '["BTC"]', 'AND', false, ${at(0)}, ${
          at(0)
        }) RETURNING id`
        const fire = (ms: number) =>
          sql`INSERT INTO signal_triggers (pool_id, user_id, symbol, fired_at, pool_name, exchange, source_type, logic, signal_values)
            VALUES (${pool!.id}, ${user!.id}, 'BTC', ${at(ms)}, 'p', 'venue1', 'market_signals', 'AND', '[]')`
        yield* fire(0)
        yield* TestClock.adjust("30 hours")
        yield* fire(30 * 3_600_000)
        yield* TestClock.adjust("1 hour")
        const remaining = () =>
          Effect.map(
            sql<{ fired_at: Date }>`SELECT fired_at FROM signal_triggers ORDER BY fired_at`,
            (rows) => rows.length
          )
        const deadline = Date.now() + 60_000
        while ((yield* remaining()) !== 1 && Date.now() < deadline) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
        }
        const rows = yield* sql<{ fired_at: Date }>`SELECT fired_at FROM signal_triggers`
        expect(rows.map((r) => new Date(r.fired_at).getTime())).toEqual([30 * 3_600_000])
      }))
  }
)
