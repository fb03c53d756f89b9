import { Schema } from "effect"

// The largest value of an `integer` column.
const maxInteger = 2_147_483_647

/** The range of an `integer` column: a whole number outside it is refused as input (400), never sent to storage. */
export const StoredInt = Schema.Int.pipe(Schema.between(-maxInteger - 1, maxInteger))

/** A stored row's id: a positive whole number that fits its `integer` column. */
export const StoredId = Schema.Int.pipe(Schema.between(1, maxInteger))

/** An id given in a path or query parameter: the text of a number, decoded to the branded id, documented as an integer. */
export const idParam = <A>(id: Schema.Schema<A, number>) =>
  Schema.NumberFromString.pipe(Schema.compose(id)).annotations({
    jsonSchema: { type: "integer", minimum: 1, maximum: maxInteger }
  })

/**
 * A whole number in a query parameter, from `minimum` up to `maximum` (by default what an
 * `integer` column holds): text on the wire, but documented as an integer, so clients generated
 * from the OpenAPI document take numbers.
 */
export const integerParam = (minimum: number, maximum = maxInteger) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(minimum, maximum)).annotations({
    jsonSchema: { type: "integer", minimum, maximum }
  })
