import { Schema } from "effect"

/** `limit` (default 50, at most 500) and `offset` (default 0), accepted by every list endpoint. */
export const Pagination = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()), { default: () => 0 })
})
export type Pagination = typeof Pagination.Type
