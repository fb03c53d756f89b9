import { Schema } from "effect"

/** An ISO-8601 date and time on the wire. */
export const Instant = Schema.String.pipe(
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "must be an ISO-8601 date and time" })
).annotations({ jsonSchema: { format: "date-time" }, examples: ["2025-01-01T00:00:00Z"] })
