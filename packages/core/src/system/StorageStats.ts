import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { Operators } from "../users/Operators.js"
import { StorageStatistics } from "./StorageStatistics.js"

const mib = 1024 * 1024
const TableRow = Schema.Struct({
  name: Schema.String,
  bytes: Schema.NumberFromString,
  rows: Schema.NumberFromString
})

/**
 * Storage statistics from the catalog (PGlite and PostgreSQL alike), in one read whatever the
 * tables hold: rows are the statistics' live-row estimates (the planner's `reltuples` where there
 * are none), not a count that would scan every table. Platform-wide, so for operators only.
 */
export class StorageStats extends Effect.Service<StorageStats>()("@trading-platform/core/StorageStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operators = yield* Operators

    const figures = Effect.gen(function*() {
      const tables = yield* Effect.flatMap(
        sql`
          SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes,
            COALESCE(s.n_live_tup, GREATEST(c.reltuples, 0)::bigint)::text AS rows
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
          WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
          ORDER BY c.relname`,
        Schema.decodeUnknown(Schema.Array(TableRow))
      )
      const entries = tables.map((table) =>
        [table.name, { rows: table.rows, size_mb: Math.round((table.bytes / mib) * 1000) / 1000 }] as const
      )
      return new StorageStatistics({
        tables: Object.fromEntries(entries),
        total_rows: entries.reduce((sum, [, t]) => sum + t.rows, 0),
        total_size_mb: Math.round((tables.reduce((sum, t) => sum + t.bytes, 0) / mib) * 1000) / 1000
      })
    }).pipe(dieOnStorageFailure)

    /** Every table's figures for an operator; any other user gets 403 `forbidden`. */
    const read = (caller: CurrentUserShape) =>
      Effect.zipRight(operators.requireOperator(caller), figures).pipe(
        withRequestSpan("StorageStats.read", { attributes: { userId: caller.id } })
      )

    return { read } as const
  }),
  dependencies: [Operators.Default]
}) {}
