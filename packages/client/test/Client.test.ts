import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { makeClient } from "@trading-platform/client"
import { NotFound, RateLimited, SessionId, Unavailable } from "@trading-platform/core/contract"
import { Effect } from "effect"
import { baseUrl, TestServer, uniqueUser } from "../../server/test/support/TestServer.js"
import { envelope, fastRetry, flakyServer, healthy } from "./support/FlakyServer.js"

describe("makeClient against the reference server", () => {
  layer(TestServer(), { timeout: "120 seconds" })((it) => {
    it.effect("registers, logs in and reads users.me with the bearer token", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const anonymous = yield* makeClient({ baseUrl: url })
        const user = uniqueUser("client")
        const registered = yield* anonymous.users.register({ payload: user })
        const { session_token } = yield* anonymous.users.login({
          payload: { email: user.email, password: user.password }
        })
        const signedIn = yield* makeClient({ baseUrl: url, token: session_token })
        const me = yield* signedIn.users.me()
        expect(me).toMatchObject({ id: registered.id, email: user.email, username: user.username })
        expect((yield* anonymous.health()).status).toBe("ok")
      }).pipe(Effect.provide(FetchHttpClient.layer)))

    it.effect("fails with core's tagged errors, decoded by status: Unauthorized with its reason, NotFound", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const anonymous = yield* makeClient({ baseUrl: url })
        const missing = yield* Effect.flip(anonymous.users.me())
        expect(missing).toMatchObject({ _tag: "Unauthorized", reason: "token_missing" })
        const badToken = yield* makeClient({ baseUrl: url, token: "not-a-token" })
        expect(yield* Effect.flip(badToken.users.me())).toMatchObject({ _tag: "Unauthorized", reason: "token_invalid" })

        const user = uniqueUser("client")
        yield* anonymous.users.register({ payload: user })
        const login = yield* anonymous.users.login({ payload: { email: user.email, password: user.password } })
        const signedIn = yield* makeClient({ baseUrl: url, token: login.session_token })
        const notFound = yield* Effect.flip(signedIn.users.revokeSession({ path: { id: SessionId.make(987654321) } }))
        expect(notFound).toBeInstanceOf(NotFound)
        expect(notFound).toMatchObject({ request_id: expect.stringMatching(/.+/) })
      }).pipe(Effect.provide(FetchHttpClient.layer)))
  })
})

// Live clock: the retries really wait, a millisecond or two each.
describe("makeClient against a flaky server", () => {
  const health = (answers: Parameters<typeof flakyServer>[0], retry: Parameters<typeof makeClient>[0]["retry"]) =>
    Effect.gen(function*() {
      const server = yield* flakyServer(answers)
      const client = yield* makeClient({ baseUrl: server.baseUrl, retry })
      const result = yield* Effect.either(client.health())
      return { result, requests: server.requests() }
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))

  it.live("retries 503 and 429 (honouring Retry-After) until the answer succeeds", () =>
    Effect.gen(function*() {
      const { requests, result } = yield* health([
        envelope(503, "unavailable"),
        { ...envelope(429, "rate_limited", { retry_after: 0 }), headers: { "retry-after": "0" } },
        healthy
      ], fastRetry)
      expect(requests).toBe(3)
      expect(result).toMatchObject({ _tag: "Right", right: { status: "ok" } })
    }))

  it.live("after the last attempt fails with the decoded error of the last answer", () =>
    Effect.gen(function*() {
      const unavailable = yield* health([envelope(503, "unavailable")], { ...fastRetry, maxAttempts: 3 })
      expect(unavailable.requests).toBe(3)
      expect(unavailable.result._tag === "Left" && unavailable.result.left).toBeInstanceOf(Unavailable)
      const limited = yield* health([envelope(429, "rate_limited", { retry_after: 2 })], {
        ...fastRetry,
        maxAttempts: 2
      })
      expect(limited.requests).toBe(2)
      expect(limited.result._tag === "Left" && limited.result.left).toEqual(
        new RateLimited({ error: "failed with 429", request_id: "req-429", retry_after: 2 })
      )
    }))

  it.live("does not retry a 404, nor anything when retry is false", () =>
    Effect.gen(function*() {
      const notFound = yield* health([envelope(404, "not_found"), healthy], fastRetry)
      expect(notFound.requests).toBe(1)
      expect(notFound.result._tag === "Left" && notFound.result.left).toBeInstanceOf(NotFound)
      expect((yield* health([envelope(503, "unavailable"), healthy], false)).requests).toBe(1)
    }))
})
