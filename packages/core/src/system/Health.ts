import { Schema } from "effect"
import { StorageKind } from "../sql/StorageKind.js"

export { StorageKind }

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok"),
  version: Schema.String,
  storage: StorageKind
}) {}
