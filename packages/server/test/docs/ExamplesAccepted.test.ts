import { HttpApi, HttpApiSchema, type HttpServer } from "@effect/platform"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { TradingApi } from "@trading-platform/core"
import { startFakeVenue2, testOptions, testStorages } from "@trading-platform/core/testing"
import { openApiDocument } from "@trading-platform/server"
import { Duration, Effect, Option } from "effect"
import { BacktestServer, isFinished, waitForBacktest } from "../support/Backtests.js"
import { waitForOptimization } from "../support/Optimizations.js"
import { call, type Reply } from "../support/TestServer.js"

/** One example the document offers for an operation's JSON body. */
interface Example {
  readonly method: string
  readonly path: string
  readonly body: Record<string, unknown>
  readonly authenticated: boolean
}

const operationOf = (example: { method: string; path: string }) => `${example.method} ${example.path}`

const examples: Array<Example> = Object.entries<any>(openApiDocument().paths).flatMap(([path, item]) =>
  Object.entries<any>(item).flatMap(([method, op]) =>
    (op?.requestBody?.content?.["application/json"]?.schema?.examples ?? []).map((body: Record<string, unknown>) => ({
      method: method.toUpperCase(),
      path,
      body,
      authenticated: (op.security ?? []).length > 0
    }))
  )
)

/** The contract's operations with a JSON body, as the document writes them. */
const jsonOperations: Array<string> = []
HttpApi.reflect(TradingApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    if (
      Option.isSome(endpoint.payloadSchema) &&
      HttpApiSchema.getEncoding(endpoint.payloadSchema.value.ast).kind === "Json"
    ) {
      jsonOperations.push(`${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`)
    }
  }
})

/** Path parameters named for their resource, not for the collection before them: the POST that creates it. */
const createdAt: Record<string, string> = { account_id: "/api/account" }

/** Collections whose members another POST creates: a backtest is its program's. */
const createdBy: Record<string, string> = { "/api/programs/backtest": "/api/programs/{id}/backtest" }

/** What has to finish before operations on it: a backtest's or an optimisation's robustness reads its result. */
const finishedFirst: Record<
  string,
  (token: string, created: any) => Effect.Effect<unknown, never, HttpServer.HttpServer>
> = {
  "/api/programs/{id}/backtest": (token, created) => waitForBacktest(token, created.id, isFinished),
  "/api/programs/{id}/optimizations": (token, created) => waitForOptimization(token, created.program_id, created.id)
}

/** Ends the user or its sessions: sent last, each as a fresh user. */
const destructive = (example: Example) => example.method === "DELETE" || example.path === "/api/users/password"

// A candle sync fetches from a venue in http mode, so venue2 is the fake one (no sync worker runs).
const fakeVenue2 = await startFakeVenue2()
afterAll(() => fakeVenue2.close())
const { automation, venues } = testOptions({ kind: "pglite", dataDir: "memory://" })
const venue2 = { mode: "http" as const, baseUrl: fakeVenue2.url, timeout: Duration.seconds(5), retries: 0 }

describe("request body examples", () => {
  it("the document offers one for every operation with a JSON body", () => {
    expect([...new Set(examples.map(operationOf))].sort()).toEqual([...jsonOperations].sort())
  })

  for (const storage of testStorages) {
    describe.skipIf(!storage.available)(`over ${storage.name}`, () => {
      // Backtests and syncs need closed candles before the clock: the backtest suites' instant.
      // With backtest workers, as the example backtest's robustness needs it to have run. The
      // examples' account has venue2 keys, so its binding would go live: the bias check rule, which
      // its own suite tests, is waived for the example binding's body.
      const server = BacktestServer(storage, {}, {
        venues: { ...venues, venue2 },
        automation: { ...automation, requireBiasCheck: false }
      })
      layer(server, { timeout: "120 seconds" })((it) => {
        it.effect("each one, sent as it is to its operation by one user in a fresh database, answers 2xx", () =>
          Effect.gen(function*() {
            const failures: Array<string> = []
            const replies = new Map<Example, Reply>()

            const send = (example: Example, token: string) =>
              Effect.gen(function*() {
                const path = yield* resolve(example.path, token)
                const reply = yield* call(example.method, path, {
                  body: example.body,
                  ...(example.authenticated ? { token } : {})
                })
                if (reply.status < 200 || reply.status > 299) {
                  failures.push(
                    `${example.method} ${path} ${JSON.stringify(example.body)}: ${reply.status} ${reply.text}`
                  )
                }
                replies.set(example, reply)
                return reply
              })

            // Each path parameter is the id of what the POST before it created (from its own example, sent once).
            const resolve = (path: string, token: string): Effect.Effect<string, never, HttpServer.HttpServer> =>
              Effect.gen(function*() {
                let template = ""
                let resolved = ""
                for (const part of path.split("/").slice(1)) {
                  const parameter = /^\{(\w+)\}$/.exec(part)?.[1]
                  const collection = createdAt[parameter ?? ""] ?? createdBy[template] ?? template
                  template += `/${part}`
                  if (parameter === undefined) {
                    resolved += `/${part}`
                    continue
                  }
                  const creator = examples.find((e) => e.method === "POST" && e.path === collection)
                  if (creator === undefined) return yield* Effect.die(`nothing creates {${parameter}} of ${path}`)
                  const created = replies.get(creator) ?? (yield* send(creator, token))
                  yield* finishedFirst[creator.path]?.(token, created.body) ?? Effect.void
                  resolved += `/${created.body?.id}`
                }
                return resolved
              })

            // The example user registers and logs in with the examples themselves.
            const register = examples.find((e) => e.path === "/api/users/register")!
            const login = examples.find((e) => e.path === "/api/users/login")!
            yield* send(register, "")
            const token: string = (yield* send(login, "")).body?.session_token ?? ""

            for (const example of examples) {
              if (!replies.has(example) && !destructive(example)) yield* send(example, token)
            }
            for (const [i, example] of examples.filter(destructive).entries()) {
              const user = { ...register.body, email: `fresh${i}@example.com`, username: `fresh${i}` }
              expect((yield* call("POST", "/api/users/register", { body: user })).status).toBe(201)
              const session = yield* call("POST", "/api/users/login", {
                body: { email: user.email, password: register.body["password"] }
              })
              yield* send(example, session.body?.session_token ?? "")
            }

            expect(failures).toEqual([])
            expect(replies.size).toBe(examples.length)
          }))
      })
    })
  }
})
