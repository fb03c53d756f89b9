import { Schema } from "effect"

/** A program's id. */
export const ProgramId = Schema.Int.pipe(Schema.positive(), Schema.brand("ProgramId"))
export type ProgramId = typeof ProgramId.Type

/**
 * The body of a program's create and update. `language` stays a plain string here, so an unknown
 * one answers 422 `unsupported_language` rather than 400.
 */
export const ProgramRequest = Schema.Struct({
  code: Schema.String.pipe(Schema.maxLength(200_000, { message: () => "must be at most 200000 characters" })),
  name: Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(200)),
  description: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(5000)))),
  language: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(50))))
}).annotations({ parseOptions: { errors: "all" } })
export type ProgramRequest = typeof ProgramRequest.Type

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
export class Program extends Schema.Class<Program>("Program")({ ...summaryFields, code: Schema.String }) {}

/** `GET /api/programs`: the caller's programs, newest first. */
export class ProgramList extends Schema.Class<ProgramList>("ProgramList")({
  programs: Schema.Array(ProgramSummary)
}) {}
