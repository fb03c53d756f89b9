import { Schema } from "effect"

export const StorageKind = Schema.Literal("pglite", "postgres")
export type StorageKind = typeof StorageKind.Type

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok"),
  version: Schema.String,
  storage: StorageKind
}) {}
