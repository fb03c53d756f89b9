import { Either, ParseResult, Schema } from "effect"
import { InvalidInput } from "../http/ErrorClasses.js"

/**
 * A program's declared parameters (issue 35 point 1): its source exports
 *
 *     export const parameters = {
 *       fast: { kind: "int", min: 2, max: 50, default: 10 },
 *       width: { kind: "float", min: 0.5, max: 3, default: 2 },
 *       side: { kind: "choice", choices: ["long", "short", "both"], default: "both" }
 *     }
 *
 * checked when the program is saved. A backtest's or a binding's `params` are then checked against
 * the declaration and completed with the defaults; a program without one takes any JSON, as before.
 */

const parameterName = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/
const Choice = Schema.Union(Schema.String.pipe(Schema.maxLength(100)), Schema.Finite, Schema.Boolean)
export type Choice = typeof Choice.Type

/** A numeric parameter: whole numbers (`int`) or any finite number (`float`) from `min` to `max`, with its default in range. */
const rangeSpec = <K extends "int" | "float">(kind: K, value: Schema.Schema<number>) =>
  Schema.Struct({ kind: Schema.Literal(kind), min: value, max: value, default: value }).pipe(
    Schema.filter((p) =>
      p.min >= p.max
        ? `min (${p.min}) must be below max (${p.max})`
        : p.default < p.min || p.default > p.max
        ? `default (${p.default}) must be within ${p.min}..${p.max}`
        : true
    )
  )

const ChoiceSpec = Schema.Struct({
  kind: Schema.Literal("choice"),
  choices: Schema.Array(Choice).pipe(Schema.minItems(1), Schema.maxItems(100)),
  default: Choice
}).pipe(Schema.filter((p) =>
  new Set(p.choices).size !== p.choices.length
    ? "choices must not repeat"
    : p.choices.includes(p.default) || `default (${JSON.stringify(p.default)}) must be one of the choices`
))

/** The `parameters` export as the program declares it: at most 50, by name. */
export const DeclaredParameters = Schema.Record({
  key: Schema.String,
  value: Schema.Union(rangeSpec("int", Schema.Int), rangeSpec("float", Schema.Finite), ChoiceSpec)
})
  .pipe(Schema.filter((r) => {
    const names = Object.keys(r)
    const bad = names.find((name) => !parameterName.test(name))
    if (bad !== undefined) {
      return `${JSON.stringify(bad)} is not a name: a letter or _, then letters, digits or _, at most 40 characters`
    }
    return names.length <= 50 || "at most 50 parameters"
  }))

/** One declared parameter, as a program's answer lists it. */
export class ProgramParameter extends Schema.Class<ProgramParameter>("ProgramParameter")({
  name: Schema.String,
  kind: Schema.Literal("int", "float", "choice"),
  /** The range of an `int` or `float`, both ends included; null for a `choice`. */
  min: Schema.NullOr(Schema.Number),
  max: Schema.NullOr(Schema.Number),
  /** A `choice`'s values; null otherwise. */
  choices: Schema.NullOr(Schema.Array(Choice)),
  default: Choice
}) {}

/** The declaration in the program's `parameters` export, in its order; a sentence naming what is wrong when it is invalid. */
export const declaredParameters = (exported: unknown): Either.Either<ReadonlyArray<ProgramParameter>, string> =>
  Schema.decodeUnknownEither(DeclaredParameters)(exported, { errors: "first" }).pipe(
    Either.mapLeft((error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return `parameters${issue!.path.map((p) => `.${String(p)}`).join("")}: ${issue!.message}`
    }),
    Either.map((declared) =>
      Object.entries(declared).map(([name, spec]) =>
        new ProgramParameter(
          spec.kind === "choice"
            ? { name, kind: spec.kind, min: null, max: null, choices: spec.choices, default: spec.default }
            : { name, kind: spec.kind, min: spec.min, max: spec.max, choices: null, default: spec.default }
        )
      )
    )
  )

/** What a backtest or a binding passes its program as `data.params`: a JSON object. */
export const ProgramParams = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type ProgramParams = typeof ProgramParams.Type

const problemOf = (p: ProgramParameter, value: unknown): string | undefined => {
  switch (p.kind) {
    case "choice":
      return p.choices!.includes(value as Choice) ? undefined : `must be one of ${JSON.stringify(p.choices)}`
    case "int":
    case "float": {
      if (typeof value !== "number" || !Number.isFinite(value)) return `must be a number`
      if (p.kind === "int" && !Number.isInteger(value)) return `must be a whole number`
      return value < p.min! || value > p.max! ? `must be within ${p.min}..${p.max}` : undefined
    }
  }
}

/**
 * `params` checked against the program's declaration and completed with the defaults, in the
 * declaration's order (400 `invalid_input` naming every parameter wrong or unknown); without a
 * declaration (null) they are taken as given.
 */
export const resolveParameters = (
  declared: ReadonlyArray<ProgramParameter> | null,
  params: ProgramParams
): Either.Either<ProgramParams, InvalidInput> => {
  if (declared === null) return Either.right(params)
  const names = new Set(declared.map((p) => p.name))
  const issues = Object.keys(params).filter((key) => !names.has(key)).map((key) => ({
    path: `params.${key}`,
    message: `is not a parameter of the program (it declares ${declared.map((p) => p.name).join(", ") || "none"})`
  }))
  const resolved: Record<string, unknown> = {}
  for (const p of declared) {
    const value = params[p.name] ?? p.default
    const message = problemOf(p, value)
    if (message !== undefined) issues.push({ path: `params.${p.name}`, message })
    resolved[p.name] = value
  }
  return issues.length === 0
    ? Either.right(resolved)
    : Either.left(new InvalidInput({ error: issues.map((i) => `${i.path} ${i.message}`).join("; "), issues }))
}
