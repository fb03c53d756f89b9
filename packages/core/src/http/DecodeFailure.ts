import { ParseResult } from "effect"
import type { Issue } from "./Errors.js"

/** One flat issue as `ParseResult.ArrayFormatter` (and `HttpApiDecodeError.issues`) gives it. */
export interface RawIssue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

// Schema's "Expected X, actual Y" and Config's "Expected X but received Y".
const expectedActual = /^Expected ([\s\S]+?)(?:, actual | but received )([\s\S]+)$/
const unableToDecode = /^Unable to decode ([\s\S]+) into an? ([\s\S]+)$/
// Schema's word for a field a strict body does not know.
const unexpectedField = /^is unexpected, expected: ([\s\S]+)$/

const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text)

/** A value as the issue shows it: strings in single quotes, anything else as JSON. */
const shown = (json: string) => {
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === "string" ? `'${clip(value)}'` : clip(json)
  } catch {
    return clip(json)
  }
}

/** What a schema expected, in words: a literal as itself, a whole object or array type by its kind. */
const expected = (text: string) => {
  if (text.startsWith("{")) return "a JSON object"
  if (text.startsWith("ReadonlyArray<") || text.startsWith("readonly [")) return "a JSON array"
  if (text.startsWith("\"") && text.endsWith("\"")) return text.slice(1, -1)
  return text
}

/**
 * The messages of one field: alternatives merged into "must be one of …", the `undefined`/`null` of
 * optional fields dropped. When the field's value has issues of its own deeper down (`nested`), it
 * was given, so an optional field's "must be undefined" says nothing and is left out.
 */
const messagesOf = (issues: ReadonlyArray<RawIssue>, nested: boolean): Array<string> => {
  const alternatives: Array<string> = []
  const others: Array<string> = []
  let actual: string | undefined
  for (const issue of issues) {
    const mismatch = expectedActual.exec(issue.message)
    if (mismatch) {
      alternatives.push(expected(mismatch[1]!))
      actual = mismatch[2]!
      continue
    }
    const unreadable = unableToDecode.exec(issue.message)
    const unknown = unexpectedField.exec(issue.message)
    others.push(
      unreadable
        ? `must be a ${unreadable[2]}; got ${shown(unreadable[1]!)}`
        : unknown
        ? `is not a known field; the known fields are ${unknown[1]!.replaceAll("\"", "").split(" | ").join(", ")}`
        : issue.message
    )
  }
  // `undefined` and `null` are what an optional or nullable field also accepts; said alone they mislead.
  const meaningful = alternatives.filter((a) => a !== "undefined" && a !== "null")
  const kept = [...new Set(meaningful.length > 0 || others.length > 0 || nested ? meaningful : alternatives)]
  if (kept.length > 0 && actual !== undefined) {
    others.unshift(`must be ${kept.length === 1 ? kept[0] : `one of ${kept.join(", ")}`}; got ${shown(actual)}`)
  }
  return [...new Set(others)]
}

/**
 * The one formatter of decode failures: one issue per field (`path` dotted, `""` for the whole
 * value), in plain words. Used by the HTTP envelope, the client, program decisions and configuration.
 */
export const describeIssues = (issues: ReadonlyArray<RawIssue>): Array<Issue> => {
  const byPath = new Map<string, Array<RawIssue>>()
  for (const issue of issues) {
    const path = issue.path.map(String).join(".")
    byPath.set(path, [...(byPath.get(path) ?? []), issue])
  }
  const paths = [...byPath.keys()]
  return [...byPath].flatMap(([path, group]) =>
    messagesOf(group, paths.some((other) => other.startsWith(`${path}.`))).map((message) => ({ path, message }))
  )
}

/** The issues of a `ParseError`. */
export const parseErrorIssues = (error: ParseResult.ParseError): Array<Issue> =>
  describeIssues(ParseResult.ArrayFormatter.formatErrorSync(error))

/** The issues as one sentence: `timeframe must be one of 1m, 5m, …; got '2h'; end is missing`. */
export const summarizeIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.map(({ message, path }) => (path === "" ? message : `${path} ${message}`)).join("; ")
