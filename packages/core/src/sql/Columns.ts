import type * as SqlClient from "@effect/sql/SqlClient"
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

/**
 * The columns of a row schema as a select list (each prefixed with `table` when given), so a read
 * loads the columns its row decodes and no others (a table's code or stored result can be megabytes).
 */
export const columnsOf = (
  sql: SqlClient.SqlClient,
  row: { readonly fields: Readonly<Record<string, unknown>> },
  table?: string
) => sql.csv(Object.keys(row.fields).map((c) => table === undefined ? sql`${sql(c)}` : sql`${sql(table)}.${sql(c)}`))
