import { Schema } from "effect"
import { StoredId } from "../http/IdParam.js"
import { TrimmedText } from "../http/TrimmedText.js"
import { ProgramParameter } from "./Parameters.js"

/** A program's id. */
export const ProgramId = StoredId.pipe(Schema.brand("ProgramId"))
export type ProgramId = typeof ProgramId.Type

/**
 * The body of a program's create and update. `language` stays a plain string here, so an unknown
 * one answers 422 `unsupported_language` rather than 400.
 */
const Code = Schema.String.pipe(Schema.maxLength(200_000, { message: () => "must be at most 200000 characters" }))
const Name = TrimmedText(200)
const Description = Schema.NullOr(Schema.String.pipe(Schema.maxLength(5000)))
const Language = Schema.NullOr(Schema.String.pipe(Schema.maxLength(50)))

export const ProgramRequest = Schema.Struct({
  code: Code,
  name: Name,
  description: Schema.optional(Description),
  language: Schema.optional(Language)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{
    name: "sma crossover",
    code: "export const parameters = {\n" +
      "  fast: { kind: \"int\", min: 2, max: 50, default: 10 },\n" +
      "  slow: { kind: \"int\", min: 10, max: 200, default: 30 }\n" +
      "}\n" +
      "export function decide(data) {\n" +
      "  const fast = ta.sma(data.candles, data.params.fast), slow = ta.sma(data.candles, data.params.slow)\n" +
      "  if (fast === null || slow === null) return { operation: \"hold\" }\n" +
      "  if (fast > slow && !data.position) return { operation: \"buy\", target_portion_of_balance: 1 }\n" +
      "  if (fast < slow && data.position) return { operation: \"close\" }\n" +
      "  return { operation: \"hold\" }\n" +
      "}\n",
    language: "javascript"
  }]
})
export type ProgramRequest = typeof ProgramRequest.Type

/**
 * `PUT /api/programs/{id}` patches, as `PUT /api/account/{id}` does: an absent field keeps its
 * value (a null `language` too); a null `description` clears it.
 */
export const ProgramUpdate = Schema.Struct({
  code: Schema.optional(Code),
  name: Schema.optional(Name),
  description: Schema.optional(Description),
  language: Schema.optional(Language)
}).annotations({ parseOptions: { errors: "all" }, examples: [{ name: "always hold, renamed" }] })
export type ProgramUpdate = typeof ProgramUpdate.Type

const summaryFields = {
  id: ProgramId,
  language: Schema.String,
  name: Schema.String,
  created_at: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String)
}

/** A program as listed: without its code. */
export class ProgramSummary extends Schema.Class<ProgramSummary>("ProgramSummary")(summaryFields) {}

/** A program with its code, as `GET /api/programs/{id}` and `POST /api/programs` answer it. */
export class Program extends Schema.Class<Program>("Program")({
  ...summaryFields,
  code: Schema.String,
  /** What its `parameters` export declares, in its order; null when it declares none. */
  parameters: Schema.NullOr(Schema.Array(ProgramParameter))
}) {}

/** `GET /api/programs`: the caller's programs, newest first. */
export class ProgramList extends Schema.Class<ProgramList>("ProgramList")({
  programs: Schema.Array(ProgramSummary)
}) {}
