import { describe, expect, it, layer } from "@effect/vitest"
import { createClient, TradingApiError } from "@trading-platform/client"
import { SessionId } from "@trading-platform/core/contract"
import { Effect } from "effect"
import { baseUrl, TestServer, uniqueUser } from "../../server/test/support/TestServer.js"
import { envelope, fastRetry, flakyServer, healthy } from "./support/FlakyServer.js"

/** The error a Promise rejected with. */
const rejection = (promise: () => Promise<unknown>) => Effect.flip(Effect.tryPromise({ try: promise, catch: (e) => e }))

describe("createClient against the reference server", () => {
  layer(TestServer(), { timeout: "120 seconds" })((it) => {
    it.effect("has the contract's groups and methods, answering Promises of decoded values", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const anonymous = createClient({ baseUrl: url })
        const user = uniqueUser("promise")
        const registered = yield* Effect.promise(() => anonymous.users.register({ payload: user }))
        const login = yield* Effect.promise(() =>
          anonymous.users.login({ payload: { email: user.email, password: user.password } })
        )
        const signedIn = createClient({ baseUrl: url, token: login.session_token })
        const me = yield* Effect.promise(() => signedIn.users.me())
        expect(me).toMatchObject({ id: registered.id, email: user.email })
        expect((yield* Effect.promise(() => signedIn.health())).status).toBe("ok")
        // A list call may leave out its all-optional params, or give some of them.
        yield* Effect.promise(() => signedIn.accounts.create({ payload: { name: "one" } }))
        yield* Effect.promise(() => signedIn.accounts.create({ payload: { name: "two" } }))
        expect((yield* Effect.promise(() => signedIn.accounts.list())).map((a) => a.name)).toEqual(["one", "two"])
        const second = yield* Effect.promise(() => signedIn.accounts.list({ urlParams: { offset: 1 } }))
        expect(second.map((a) => a.name)).toEqual(["two"])
      }))

    it.effect("imports a candle file as bytes into a dataset and reads it back as klines of dataset:NAME", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const user = uniqueUser("promise")
        const anonymous = createClient({ baseUrl: url })
        yield* Effect.promise(() => anonymous.users.register({ payload: user }))
        const login = yield* Effect.promise(() =>
          anonymous.users.login({ payload: { email: user.email, password: user.password } })
        )
        const client = createClient({ baseUrl: url, token: login.session_token })
        const start = Date.parse("2025-01-01T00:00:00Z")
        const csv = Array.from({ length: 6 }, (_, i) => `${start + i * 3_600_000},100,101,99,100.5,${i + 1}`).join("\n")
        const imported = yield* Effect.promise(() =>
          client.market.importCandles({
            urlParams: { name: "from-client", symbol: "BTC", timeframe: "1h" },
            payload: new TextEncoder().encode(csv)
          })
        )
        expect(imported).toMatchObject({ imported: 6, rejected: 0, dataset: { name: "from-client", bars: 6 } })
        const datasets = yield* Effect.promise(() => client.market.datasets())
        expect(datasets.datasets.map((d) => d.name)).toEqual(["from-client"])
        const klines = yield* Effect.promise(() =>
          client.market.klines({
            urlParams: {
              symbol: "BTC",
              timeframe: "1h",
              exchange: "dataset:from-client",
              start: "2025-01-01T00:00:00Z"
            }
          })
        )
        expect(klines.klines.map((k) => k.volume)).toEqual([1, 2, 3, 4, 5, 6])
        expect(klines.next_start).toBeNull()
      }))

    it.effect("rejects with TradingApiError carrying status, code and request_id of the envelope", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const missing = yield* rejection(() => createClient({ baseUrl: url }).users.me())
        expect(missing).toBeInstanceOf(TradingApiError)
        expect(missing).toMatchObject({ status: 401, code: "unauthorized", message: "A session token is required" })
        expect((missing as TradingApiError).request_id).toMatch(/.+/)
        expect((missing as TradingApiError).cause).toMatchObject({ _tag: "Unauthorized", reason: "token_missing" })

        const user = uniqueUser("promise")
        const anonymous = createClient({ baseUrl: url })
        yield* Effect.promise(() => anonymous.users.register({ payload: user }))
        const login = yield* Effect.promise(() =>
          anonymous.users.login({ payload: { email: user.email, password: user.password } })
        )
        const signedIn = createClient({ baseUrl: url, token: login.session_token })
        const notFound = yield* rejection(() =>
          signedIn.users.revokeSession({ path: { id: SessionId.make(987654321) } })
        )
        expect(notFound).toMatchObject({ status: 404, code: "not_found", retry_after: undefined })
      }))
  })
})

// Live clock: the retries really wait, a millisecond or two each.
describe("createClient against a flaky server", () => {
  const onFlakyServer = <A>(
    answers: Parameters<typeof flakyServer>[0],
    use: (client: ReturnType<typeof createClient>) => Promise<A>,
    retry: Parameters<typeof createClient>[0]["retry"] = fastRetry
  ) =>
    Effect.gen(function*() {
      const server = yield* flakyServer(answers)
      const outcome = yield* Effect.either(Effect.tryPromise({
        try: () => use(createClient({ baseUrl: server.baseUrl, retry })),
        catch: (e) => e as TradingApiError
      }))
      return { outcome, requests: server.requests() }
    }).pipe(Effect.scoped)

  it.live("retries 5xx and 429 by the rule, then resolves", () =>
    Effect.gen(function*() {
      const { outcome, requests } = yield* onFlakyServer(
        [envelope(502, "upstream_error"), envelope(429, "rate_limited", { retry_after: 0 }), healthy],
        (client) => client.health()
      )
      expect(requests).toBe(3)
      expect(outcome).toMatchObject({ _tag: "Right", right: { status: "ok" } })
    }))

  it.live("a 429 it gave up on rejects with retry_after from the envelope", () =>
    Effect.gen(function*() {
      const { outcome, requests } = yield* onFlakyServer(
        [{ ...envelope(429, "rate_limited", { retry_after: 3 }), headers: { "x-request-id": "req-429" } }],
        (client) => client.health(),
        false
      )
      expect(requests).toBe(1)
      expect(outcome._tag === "Left" && outcome.left).toMatchObject({
        status: 429,
        code: "rate_limited",
        request_id: "req-429",
        retry_after: 3
      })
    }))

  it.live("an answer outside the contract rejects as unexpected_response with its status", () =>
    Effect.gen(function*() {
      const { outcome } = yield* onFlakyServer(
        [{ status: 418, headers: { "x-request-id": "teapot" }, body: "<html>" }],
        (client) => client.health()
      )
      expect(outcome._tag === "Left" && outcome.left).toMatchObject({
        status: 418,
        code: "unexpected_response",
        request_id: "teapot"
      })
    }))

  it.live("a server that does not answer rejects as transport_error without a status", () =>
    Effect.gen(function*() {
      const closed = yield* flakyServer([healthy]).pipe(Effect.scoped)
      const error = yield* rejection(() => createClient({ baseUrl: closed.baseUrl }).health())
      expect(error).toBeInstanceOf(TradingApiError)
      expect(error).toMatchObject({ status: undefined, code: "transport_error", request_id: undefined })
    }))
})
