import { Schema } from "effect"

/** An id given in a path or query parameter: the text of a number, decoded to the branded id, documented as an integer. */
export const idParam = <A>(id: Schema.Schema<A, number>) =>
  Schema.NumberFromString.pipe(Schema.compose(id)).annotations({ jsonSchema: { type: "integer", minimum: 1 } })

/**
 * A whole number in a query parameter, from `minimum` (up to `maximum`): text on the wire, but
 * documented as an integer, so clients generated from the OpenAPI document take numbers.
 */
export const integerParam = (minimum: number, maximum?: number) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    maximum === undefined ? Schema.greaterThanOrEqualTo(minimum) : Schema.between(minimum, maximum)
  ).annotations({ jsonSchema: { type: "integer", minimum, ...(maximum === undefined ? {} : { maximum }) } })
