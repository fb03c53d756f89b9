import { Option, Schema, SchemaAST } from "effect"

// The default shows in the OpenAPI document, also where the schema gives its own JSON Schema.
const documentedDefault = <A, I, R>(schema: Schema.Schema<A, I, R>, value: A) =>
  schema.annotations(Option.match(SchemaAST.getJSONSchemaAnnotation(schema.ast), {
    onNone: () => ({ default: value }),
    onSome: (json) => ({ default: value, jsonSchema: { ...json, default: value } })
  }))

/**
 * An optional body field that the service fills with `value` when it is absent or null. It is
 * optional on both sides of the schema, so typed clients may leave it out, and the OpenAPI
 * document shows the default.
 */
export const defaulted = <A, I, R>(schema: Schema.Schema<A, I, R>, value: A) =>
  Schema.optionalWith(documentedDefault(schema, value), { nullable: true, exact: true })

/** The same for a query parameter, which is never null. */
export const defaultedParam = <A, I extends string, R>(schema: Schema.Schema<A, I, R>, value: A) =>
  Schema.optionalWith(documentedDefault(schema, value), { exact: true })
