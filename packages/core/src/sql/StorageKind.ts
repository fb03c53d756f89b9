import { Schema } from "effect"

/** Where the platform keeps its data: embedded PGlite or a PostgreSQL server. */
export const StorageKind = Schema.Literal("pglite", "postgres")
export type StorageKind = typeof StorageKind.Type
