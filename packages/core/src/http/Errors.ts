import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import * as classes from "./ErrorClasses.js"
import { CurrentRequestId } from "./RequestId.js"

export * from "./ErrorClasses.js"

interface ErrorClass<A> extends Schema.Schema<A, any, never> {
  new(props: any): A
  readonly fields: Schema.Struct.Fields
  readonly status: number
  readonly description: string
}

/** The error classes of `ErrorClasses.ts`, by name (their schemas of other things left out). */
type Classes = {
  readonly [K in keyof typeof classes as (typeof classes)[K] extends { readonly status: number } ? K : never]:
    (typeof classes)[K]
}

/** `NotFound` → `not_found`. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S
type Code<Name extends string> = SnakeCase<Uncapitalize<Name>>

const codeOf = (name: string) => name.replace(/(?<!^)[A-Z]/g, (upper) => `_${upper}`).toLowerCase()

/** The wire body of every error: `{ error, code, request_id }` plus the error's own diagnostic fields. */
export interface Envelope<C extends string> {
  readonly error: string
  readonly code: C
  readonly request_id: string
  readonly [field: string]: unknown
}

/**
 * The wire schema of an error class: the encoded side is the envelope (no `_tag`), the type side
 * the tagged error, so servers and clients can `Effect.catchTag` it. The request id is read from
 * `CurrentRequestId` while the server encodes the error.
 */
const wire = <A extends { readonly error: string; readonly request_id?: string | undefined }, const C extends string>(
  cls: ErrorClass<A>,
  code: C
): Schema.Schema<A, Envelope<C>> => {
  const { _tag, error, request_id, ...diagnostics } = cls.fields
  const encoded = Schema.Struct({
    error: Schema.String,
    code: Schema.Literal(code),
    request_id: Schema.String,
    ...diagnostics
  })
  return Schema.transformOrFail(encoded, Schema.typeSchema(cls), {
    strict: false,
    decode: ({ code: _code, ...props }) => ParseResult.succeed(new cls(props)),
    encode: (e) =>
      Effect.map(FiberRef.get(CurrentRequestId), (id) => ({
        ...(e as object),
        code,
        request_id: e.request_id ?? id
      }))
  }).annotations(HttpApiSchema.annotations({ status: cls.status, description: cls.description })) as any
}

const errorClasses = Object.entries(classes).filter(([, value]) => "status" in value) as Array<
  [string, ErrorClass<any>]
>

/**
 * The error catalogue as wire schemas, each with its HTTP status and stable `code`.
 * Endpoints declare them with `.addError(ApiError.NotFound)`.
 */
export const ApiError = Object.fromEntries(errorClasses.map(([name, cls]) => [name, wire(cls, codeOf(name))])) as {
  readonly [K in keyof Classes]: Schema.Schema<InstanceType<Classes[K]>, Envelope<Code<K>>>
}

/** One row per error: name, code, status and meaning; `docs/errors.md` lists the same. */
export const errorCatalogue = errorClasses.map(([name, { description, status }]) => ({
  name,
  code: codeOf(name),
  status,
  description
}))
