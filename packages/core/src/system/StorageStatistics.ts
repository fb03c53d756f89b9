import { Schema } from "effect"

export const TableStats = Schema.Struct({
  /** Exact count of the table's rows. */
  rows: Schema.Int,
  /** The table with its indexes and TOAST data, in MiB. */
  size_mb: Schema.Number
})

/** `GET /api/system/storage-stats`: every table of the platform's schema, read from the database's own catalog. */
export class StorageStatistics extends Schema.Class<StorageStatistics>("StorageStatistics")({
  tables: Schema.Record({ key: Schema.String, value: TableStats }),
  total_rows: Schema.Int,
  total_size_mb: Schema.Number
}) {}
