import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { migrate, migrations, PgliteClient } from "@trading-platform/core"
import { Effect } from "effect"

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
})
