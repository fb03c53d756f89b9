import { Schema } from "effect"

/**
 * Documents text the server trims before checking it, whose own JSON Schema would only say "a
 * string that will be trimmed": the rules hold once the spaces around are gone, and a text that
 * must not be empty has a character other than a space (`pattern: \S`).
 */
export const documentTrimmed = <S extends Schema.Schema.Any>(
  schema: S,
  rules: {
    readonly max: number
    readonly nonEmpty: boolean
    readonly format?: "email" | "uri"
    /** What the text is once trimmed, e.g. "an e-mail address". */
    readonly what?: string
  }
): S =>
  schema.annotations({
    jsonSchema: {
      type: "string",
      maxLength: rules.max,
      ...(rules.nonEmpty ? { pattern: "\\S" } : {}),
      ...(rules.format === undefined ? {} : { format: rules.format }),
      description: rules.what === undefined
        ? `Trimmed, then ${rules.nonEmpty ? 1 : 0} to ${rules.max} characters`
        : `Trimmed, then ${rules.what} of at most ${rules.max} characters`
    }
  }) as S

/** A name or short text: trimmed, then 1 to `max` characters ("must not be empty" when blank). */
export const TrimmedText = (max: number) =>
  documentTrimmed(
    Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(max)),
    { max, nonEmpty: true }
  )
