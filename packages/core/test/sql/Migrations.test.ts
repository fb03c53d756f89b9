import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { DatabaseLive, migrate, migrations, PgliteClient, PlatformConfig } from "@trading-platform/core"
import { Effect, Layer } from "effect"
import { testOptions, testStorages } from "../support/TestStorage.js"

describe("migrate", () => {
  it.effect("runs what a schema behind the code lacks, then nothing once it is current", () =>
    Effect.gen(function*() {
      const all = yield* migrations
      const [id, name] = all.at(-1)!
      // A database an earlier release migrated: every migration but the last.
      yield* Migrator.make({})({ loader: Effect.succeed(all.slice(0, -1)), table: "trading_platform_migrations" })
      expect(yield* migrate).toEqual([[id, name]])
      expect(yield* migrate).toEqual([])
    }).pipe(Effect.provide(PgliteClient.layer(undefined))), { timeout: 60_000 })

  const postgres = testStorages[1]!
  it.scoped.skipIf(!postgres.available)(
    "replicas starting together on one new PostgreSQL database migrate it once, one after the other",
    () =>
      Effect.gen(function*() {
        const storage = yield* postgres.storage
        const scope = yield* Effect.scope
        // Each replica is its own pool, as a process of its own would be; all start at once.
        const replica = Layer.buildWithScope(
          DatabaseLive.pipe(Layer.provide(PlatformConfig.layer(testOptions(storage)))),
          scope
        )
        const started = yield* Effect.all(Array.from({ length: 4 }, () => replica), { concurrency: "unbounded" })
        const sql = (started[0]!).unsafeMap.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM trading_platform_migrations`
        expect(rows[0]!.n).toBe((yield* migrations).length)
      }),
    { timeout: 120_000 }
  )
})
