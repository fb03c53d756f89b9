import { Schema } from "effect"

/** A `timestamptz` column (a Date from both drivers) as an ISO-8601 UTC string. */
export const IsoTimestamp = Schema.transform(Schema.DateFromSelf, Schema.String, {
  strict: true,
  decode: (date) => date.toISOString(),
  encode: (iso) => new Date(iso)
})
