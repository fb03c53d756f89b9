import { HttpServerRequest } from "@effect/platform"
import { InvalidInput, type Issue } from "@trading-platform/core"
import { Effect } from "effect"
import { routeOf } from "./Routes.js"

// NUL, which a text column cannot hold, and a UTF-16 surrogate without its pair, which UTF-8 cannot encode.
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

// In JSON text both can only arrive escaped; a body without such an escape is not parsed here.
const escaped = /\\u(0000|d[89a-f])/i

const message = "must not contain a NUL character or an unpaired surrogate"

/** The dotted path of the first string (value or key) in a JSON value that storage cannot hold. */
const firstUnstorable = (value: unknown, path: ReadonlyArray<string>): string | undefined => {
  if (typeof value === "string") return unstorable.test(value) ? path.join(".") : undefined
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    if (unstorable.test(key)) return [...path, key].join(".")
    const found = firstUnstorable(item, [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

const refuse = (issue: Issue) =>
  Effect.fail(new InvalidInput({ error: `Invalid request: ${issue.path} ${issue.message}`, issues: [issue] }))

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text // not valid percent-encoding: the parameter's own schema refuses it
  }
}

/**
 * Refuses text that storage cannot hold (NUL, unpaired surrogates) in any path or query
 * parameter or JSON body field, with 400 naming the field, for every operation at once: text
 * columns would otherwise fail with a 500, or store something other than what was sent.
 */
export const guardStorableText = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const matched = routeOf(request)
  if (matched === undefined) return
  for (const [name, raw] of matched.params) {
    if (unstorable.test(decoded(raw))) return yield* refuse({ path: name, message })
  }
  for (const [name, value] of new URLSearchParams(request.url.split("?")[1] ?? "")) {
    if (unstorable.test(name) || unstorable.test(value)) return yield* refuse({ path: name, message })
  }
  if (matched.route.body !== "json") return
  // A body that cannot be read fails as the payload's decoding would (413 or 400, below).
  const text = yield* Effect.orDie(request.text)
  if (!escaped.test(text)) return
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return // not JSON: the payload's decoding answers that
  }
  const path = firstUnstorable(body, [])
  if (path !== undefined) return yield* refuse({ path, message })
})
