import { HttpApi } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { TradingApi } from "@trading-platform/core"
import { Arbitrary, Effect, FastCheck, Schema } from "effect"
import { request as httpRequest } from "node:http"
import { createAccount } from "../support/Accounts.js"
import { baseUrl, call, expectError, signUp, TestServer } from "../support/TestServer.js"

/**
 * Generated requests in all, spread over the operations; `FUZZ_RUNS` raises it for a longer run.
 * About 22 per operation of the 101: at 20, no generated create succeeds (the 201 checked below).
 */
const totalRuns = Number(process.env["FUZZ_RUNS"] ?? 2_200)
const seed = 20261123

interface Operation {
  readonly method: string
  /** OpenAPI form: `/api/account/{account_id}`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly hasBody: boolean
  /** Its body is JSON (a file upload's is not, and is never 415 for another type). */
  readonly jsonBody: boolean
}

// The WebSocket (`/api/ws`) is documented beside the contract; its upgrade is tested in the stream suites.
const operationsOf = (document: any): ReadonlyArray<Operation> =>
  Object.entries<any>(document.paths).filter(([path]) => path !== "/api/ws").flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]): Operation => ({
      method: method.toUpperCase(),
      path,
      pathParams: (op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name),
      queryParams: (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name),
      hasBody: op.requestBody !== undefined,
      jsonBody: op.requestBody?.content?.["application/json"] !== undefined
    }))
  )

/** The contract's payload schema (wire side) of each operation, keyed `METHOD /openapi/{path}`. */
const payloadSchemas = (() => {
  const schemas = new Map<string, Schema.Schema<any>>()
  HttpApi.reflect(TradingApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      const json = payloads.get("application/json")
      if (json) {
        schemas.set(
          `${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`,
          Schema.encodedSchema(Schema.make(json.ast))
        )
      }
    }
  })
  return schemas
})()

/**
 * What a broken field holds: any JSON, text of every Unicode category (lone surrogates and NUL
 * included), and whole numbers over the whole safe range.
 */
const anyValue = FastCheck.oneof(
  FastCheck.jsonValue({ maxDepth: 3 }),
  FastCheck.string({ unit: "binary", maxLength: 16 }),
  FastCheck.constantFrom("\u0000", "a\ud800", 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER),
  FastCheck.maxSafeInteger()
)

/** Valid bodies from the contract's schema, then broken: a field dropped or replaced by any value. */
const bodyArbitrary = (op: Operation): FastCheck.Arbitrary<unknown> => {
  const schema = payloadSchemas.get(`${op.method} ${op.path}`)
  const anyJson = FastCheck.jsonValue({ maxDepth: 3 })
  if (!schema) return anyJson
  const valid = Arbitrary.make(schema) as FastCheck.Arbitrary<unknown>
  const broken = FastCheck.tuple(valid, FastCheck.string({ maxLength: 12 }), anyValue, FastCheck.boolean()).map(
    ([body, key, value, drop]) => {
      if (typeof body !== "object" || body === null || Array.isArray(body)) return value
      const keys = Object.keys(body)
      const target = keys.length > 0 ? keys[key.length % keys.length]! : key
      const copy: Record<string, unknown> = { ...body }
      if (drop) delete copy[target]
      else copy[target] = value
      return copy
    }
  )
  return FastCheck.oneof(valid, broken, broken, anyJson)
}

/** What goes on the wire: JSON of the body, or something that is not JSON at all. */
const rawBody = (op: Operation) =>
  FastCheck.oneof(
    { weight: 4, arbitrary: bodyArbitrary(op).map((body) => JSON.stringify(body) ?? "null") },
    FastCheck.constant(""),
    FastCheck.string({ maxLength: 64 }),
    FastCheck.constant("<account><name>x</name></account>"),
    FastCheck.constant("--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--x--\r\n"),
    FastCheck.constant("name=x&initial_capital=5")
  )

const contentType = FastCheck.oneof(
  {
    weight: 3,
    arbitrary: FastCheck.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "Application/JSON;charset=UTF-8"
    )
  },
  {
    weight: 2,
    arbitrary: FastCheck.constantFrom(
      "multipart/form-data",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded",
      "application/xml",
      "text/plain",
      "text/plain; charset=utf-8",
      "application/octet-stream",
      "application/jsonp",
      "garbage",
      undefined
    )
  }
)

/** Ids of the victim's resources, ids that exist nowhere, and things that are not ids. */
const paramValue = (victimIds: ReadonlyArray<number>) =>
  FastCheck.oneof(
    FastCheck.constantFrom(...victimIds.map(String)),
    FastCheck.integer({ min: -5, max: 1_000_000 }).map(String),
    FastCheck.maxSafeInteger().map(String),
    FastCheck.constantFrom(
      "0",
      "-1",
      "1e3",
      "1.5",
      "2147483647",
      "2147483648",
      "9007199254740993",
      "99999999999999999999",
      "abc",
      "%00",
      "%2e%2e",
      "null",
      "%F0%9F%92%A5"
    ),
    FastCheck.string({ maxLength: 20 }).map(encodeURIComponent)
  )

const queryValue = FastCheck.oneof(
  FastCheck.constantFrom(
    "",
    "-1",
    "0",
    "1",
    "1000000",
    "abc",
    "BTC",
    "1h",
    "venue1",
    "day",
    "2025-01-01T00:00:00Z",
    "not-a-date",
    "%00",
    "2147483648",
    "99999999999999999999"
  ),
  FastCheck.maxSafeInteger().map(String),
  FastCheck.string({ unit: "grapheme", maxLength: 20 }).map(encodeURIComponent)
)

/** A POST whose body has no Content-Type at all (fetch would add text/plain); answers the status. */
const postWithoutContentType = (path: string, body: string, token: string) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.async<number>((resume) => {
      const request = httpRequest(
        `${base}${path}`,
        { method: "POST", headers: { authorization: `Bearer ${token}` } },
        (response) => {
          response.resume()
          response.on("end", () => resume(Effect.succeed(response.statusCode ?? 0)))
        }
      )
      request.end(body)
    }))

interface Caller {
  token: string
  readonly email: string
  password: string
}

/** The victim's resources as they read back; compared before and after the run. */
const snapshot = (token: string, accountId: number, programId: number) =>
  Effect.gen(function*() {
    const reads = [
      "/api/users/me",
      `/api/account/${accountId}`,
      "/api/account/list",
      `/api/programs/${programId}`,
      "/api/programs",
      "/api/users/sessions"
    ]
    const bodies: Array<unknown> = []
    for (const path of reads) {
      const reply = yield* call("GET", path, { token })
      expect(reply.status, path).toBe(200)
      bodies.push(reply.body)
    }
    return bodies
  })

layer(TestServer(), { timeout: "600 seconds" })("generated bad requests to every operation (property-based)", (it) => {
  it.effect("a body sent to an operation that takes JSON as anything but application/json answers 415 before it is read", () =>
    Effect.gen(function*() {
      const { token } = yield* signUp("ctype")
      for (
        const type of [
          "multipart/form-data",
          "application/xml",
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/jsonx"
        ]
      ) {
        for (
          const [method, path] of [["POST", "/api/account"], ["PUT", "/api/account/1"], ["POST", "/api/users/login"], [
            "POST",
            "/api/programs/1/backtest"
          ]] as const
        ) {
          const reply = yield* call(method, path, { raw: "{\"name\":\"x\"}", token, headers: { "content-type": type } })
          expectError(reply, 415, "unsupported_media_type")
          expect(reply.body.error).toContain(type)
        }
      }
      // JSON with a charset, and a body without Content-Type (read as JSON), are accepted.
      expect(
        (yield* call("POST", "/api/account", {
          raw: "{\"name\":\"x\"}",
          token,
          headers: { "content-type": "application/json; charset=utf-8" }
        })).status
      ).toBe(201)
      expect(yield* postWithoutContentType("/api/account", "{\"name\":\"y\"}", token)).toBe(201)
      // Operations without a body, and unknown routes, do not look at the Content-Type.
      expect((yield* call("GET", "/api/users/me", { token, headers: { "content-type": "text/plain" } })).status).toBe(
        200
      )
      expectError(
        yield* call("POST", "/api/nope", { raw: "x", token, headers: { "content-type": "text/plain" } }),
        404,
        "not_found"
      )
      expect(
        (yield* call("POST", "/api/users/logout", { raw: "x", token, headers: { "content-type": "text/plain" } }))
          .status
      ).toBe(204)
    }))

  it.effect(
    "never a 5xx, the envelope on every 4xx, and another user's data intact afterwards",
    () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const document = yield* Effect.promise(() => fetch(`${base}/openapi.json`).then((r) => r.json()))
        const operations = operationsOf(document)
        expect(operations.length).toBeGreaterThan(25)

        const victim = yield* signUp("victim")
        const account = yield* createAccount(victim.token)
        const program = yield* call("POST", "/api/programs", {
          token: victim.token,
          body: { name: "victim's", code: "export function decide() { return { operation: \"hold\" } }" }
        })
        expect(program.status).toBe(201)
        const before = yield* snapshot(victim.token, account.id, program.body.id)

        const attacker: Caller = yield* signUp("attacker")
        const ownAccount = yield* createAccount(attacker.token)
        const victimIds = [account.id, program.body.id, victim.id, ownAccount.id, 1]
        // The attacker's session may be ended by a generated logout: log in again then.
        const relogin = async () => {
          const reply = await fetch(`${base}/api/users/login`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: attacker.email, password: attacker.password })
          })
          if (reply.status === 200) attacker.token = (await reply.json()).session_token
        }

        // At least 22 runs each, whatever the number of operations: spread thinner over a new group of
        // operations, the fixed seed's runs of each stopped short of the one that creates (no 201 at all).
        const runsPer = Math.max(22, Math.ceil(totalRuns / operations.length))
        let sent = 0
        const statuses = new Map<number, number>()
        for (const op of operations) {
          const request = FastCheck.record({
            params: FastCheck.tuple(...op.pathParams.map(() => paramValue(victimIds))),
            query: FastCheck.array(FastCheck.tuple(FastCheck.constantFrom(...op.queryParams, "extra"), queryValue), {
              maxLength: 4
            }),
            body: op.hasBody ? FastCheck.option(rawBody(op), { freq: 8 }) : FastCheck.constant(null),
            contentType,
            auth: FastCheck.constantFrom("bearer", "bearer", "bearer", "query", "none", "garbage")
          })
          const property = FastCheck.asyncProperty(request, async (r) => {
            let path = op.path
            op.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, r.params[i]!)))
            const query = new URLSearchParams(r.query)
            if (r.auth === "query") query.set("session_token", attacker.token)
            const headers: Record<string, string> = {}
            if (r.contentType !== undefined) headers["content-type"] = r.contentType
            if (r.auth === "bearer") headers["authorization"] = `Bearer ${attacker.token}`
            if (r.auth === "garbage") headers["authorization"] = "Bearer tps_not-a-token"
            const response = await fetch(`${base}${path}${query.size > 0 ? `?${query}` : ""}`, {
              method: op.method,
              headers,
              ...(r.body !== null ? { body: r.body } : {})
            })
            // A stream that opened answers until the client leaves: its head is the answer.
            const streaming = response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream")
            const text = streaming ? (await response.body?.cancel(), "") : await response.text()
            sent++
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
            const what = `${op.method} ${path}?${query} [${r.contentType}] ${
              r.body?.slice(0, 200)
            } -> ${response.status} ${text.slice(0, 300)}`
            expect(response.status, what).toBeLessThan(500)
            if (response.status >= 400) {
              const body = JSON.parse(text)
              expect(typeof body.code === "string" && typeof body.error === "string", what).toBe(true)
              expect(body.request_id, what).toBe(response.headers.get("x-request-id"))
              if (body.reason === "token_revoked") await relogin()
            }
            // 415 exactly when an operation that takes JSON is told its body is something else (a
            // parameter such as %2e%2e or an empty one may lead the URL to no operation, or to another path's: 404 or 405).
            const declaredJson = r.contentType === undefined
              ? r.body === null
              : /^application\/json\s*(;|$)/i.test(r.contentType)
            const routed = !text.includes("No route for") && response.status !== 405
            if (routed) expect(response.status === 415, what).toBe(op.jsonBody && !declaredJson)
          })
          yield* Effect.promise(() => FastCheck.assert(property, { numRuns: runsPer, seed, endOnFailure: true }))
        }
        expect(sent).toBeGreaterThanOrEqual(totalRuns)
        // Not vacuous: the generated requests reach the handlers (some succeed) as well as every guard.
        for (const status of [200, 201, 400, 401, 403, 404, 415]) {
          expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0)
        }

        expect(yield* snapshot(victim.token, account.id, program.body.id)).toEqual(before)
      }),
    600_000
  )
})
