import { Schema } from "effect"

/** An id given in a path or query parameter: the text of a number, decoded to the branded id. */
export const idParam = <A>(id: Schema.Schema<A, number>) => Schema.NumberFromString.pipe(Schema.compose(id))
