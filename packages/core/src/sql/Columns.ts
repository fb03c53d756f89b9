import { Schema } from "effect"

/** A `timestamptz` column (a Date from both drivers) as an ISO-8601 UTC string. */
export const IsoTimestamp = Schema.transform(Schema.DateFromSelf, Schema.String, {
  strict: true,
  decode: (date) => date.toISOString(),
  encode: (iso) => new Date(iso)
})

/**
 * The make option for a response class built field by field from a row its schema decoded: the
 * constructor need not check the values again (for a backtest's curve and trades that check cost
 * more than encoding them), and the API's encoder still checks every value it answers. Not for a
 * class given a spread row: only a checking constructor drops the columns it does not declare.
 */
export const fromDecodedRow = { disableValidation: true } as const
