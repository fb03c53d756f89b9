import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { Operators } from "../users/Operators.js"
import { StorageStatistics } from "./StorageStatistics.js"

const mib = 1024 * 1024
const TableRow = Schema.Struct({ name: Schema.String, bytes: Schema.NumberFromString })
const CountRow = Schema.Struct({ rows: Schema.NumberFromString })

/** Storage statistics from `pg_class` (PGlite and PostgreSQL alike): platform-wide, so for operators only. */
export class StorageStats extends Effect.Service<StorageStats>()("@trading-platform/core/StorageStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operators = yield* Operators

    const figures = Effect.gen(function*() {
      const tables = yield* Effect.flatMap(
        sql`
          SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
          ORDER BY c.relname`,
        Schema.decodeUnknown(Schema.Array(TableRow))
      )
      // The catalog's row estimate is -1 until a table is analysed, so rows are counted.
      const entries = yield* Effect.forEach(tables, (table) =>
        Effect.map(
          Effect.flatMap(
            sql`SELECT count(*)::text AS rows FROM ${sql(table.name)}`,
            Schema.decodeUnknown(Schema.Array(CountRow))
          ),
          ([count]) =>
            [table.name, { rows: count?.rows ?? 0, size_mb: Math.round((table.bytes / mib) * 1000) / 1000 }] as const
        ))
      return new StorageStatistics({
        tables: Object.fromEntries(entries),
        total_rows: entries.reduce((sum, [, t]) => sum + t.rows, 0),
        total_size_mb: Math.round((tables.reduce((sum, t) => sum + t.bytes, 0) / mib) * 1000) / 1000
      })
    }).pipe(dieOnStorageFailure)

    /** Every table's figures for an operator; any other user gets 403 `forbidden`. */
    const read = (caller: CurrentUserShape) =>
      Effect.zipRight(operators.requireOperator(caller), figures).pipe(
        Effect.withSpan("StorageStats.read", { attributes: { userId: caller.id } })
      )

    return { read } as const
  }),
  dependencies: [Operators.Default]
}) {}
