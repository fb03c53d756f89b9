import { Option, type Schema, SchemaAST } from "effect"

/**
 * A request body that refuses fields it does not know (400 naming them), as the document's
 * `additionalProperties: false` says; a misspelt field is a mistake to report, not to ignore.
 * Nested objects inherit it. Keeps the schema's other parse options.
 */
export const strictBody = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({
    parseOptions: {
      ...Option.getOrUndefined(SchemaAST.getParseOptionsAnnotation(schema.ast)),
      onExcessProperty: "error"
    }
  }) as S
