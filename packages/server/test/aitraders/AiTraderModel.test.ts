import { describe, expect, layer } from "@effect/vitest"
import { defaultAiTraderOptions } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, Layer, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { AutomationServer } from "../support/Automation.js"
import { completion, fake, FakeProvider, reset, type Script, silent, status } from "../support/FakeModel.js"
import { call, signUp } from "../support/TestServer.js"

const apiKey = "sk-ai-trader-secret-0123456789abcdef"

// Prices per million tokens, so the fake's usage (42 prompt, 7 completion) has a cost to check.
const prices = { "test-model": { prompt: 1000, completion: 2000 } }

// The fake model server on loopback, which the operator's allow list lets the server call.
const Server = (storage: (typeof testStorages)[number]) =>
  Layer.unwrapScoped(Effect.map(FakeProvider, () =>
    // Two run workers, so two rounds could run at once: only other accounts' do.
    AutomationServer(storage, { concurrency: 2 }, {
      fetch: { allowHosts: ["127.0.0.1"] },
      aiTraders: { ...defaultAiTraderOptions, timeout: Duration.minutes(2), prices }
    })))

// The test clock moves a second at a time while rounds are awaited: retry waits and timeouts run on it.
const tick = TestClock.adjust("1 second")
const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Queues a round by hand and answers it once finished (stepping the test clock by `step` meanwhile). */
const round = (token: string, accountId: number, step = tick) =>
  Effect.gen(function*() {
    // Each round at a moment of its own: a prompt holds its time, and the very same prompt is
    // answered from the model-call cache, without asking the fake.
    yield* tick
    const queued = yield* call("POST", `/api/account/${accountId}/ai-trader/decide`, { token })
    expect(queued.status).toBe(202)
    const deadline = Date.now() + 30_000
    for (;;) {
      const [latest] = (yield* call("GET", `/api/account/${accountId}/decisions?limit=1`, { token })).body.decisions
      if (latest.id === queued.body.id && (latest.status === "completed" || latest.status === "failed")) return latest
      if (Date.now() > deadline) return yield* Effect.die(new Error(`round at the deadline: ${JSON.stringify(latest)}`))
      yield* step
      yield* realPause
    }
  })

/** An AI account whose model is the fake's, with a key. */
const modelAccount = (token: string, baseUrl = fake.url) =>
  createAccount(token, { model: "test-model", base_url: baseUrl, api_key: apiKey })

/** Queues a round by hand; answers its id. */
const queue = (token: string, accountId: number) =>
  Effect.map(call("POST", `/api/account/${accountId}/ai-trader/decide`, { token }), (reply) => reply.body.id as number)

/** Waits (stepping the test clock) until every round of the account has finished. */
const settled = (token: string, accountId: number, count: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 30_000
    for (;;) {
      const rounds = (yield* call("GET", `/api/account/${accountId}/decisions`, { token })).body.decisions
      if (rounds.length === count && rounds.every((r: any) => r.status === "completed" || r.status === "failed")) {
        return rounds
      }
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`rounds at the deadline: ${JSON.stringify(rounds)}`))
      }
      yield* tick
      yield* realPause
    }
  })

/** Answers after a real pause, counting the calls the fake is answering at once. */
const load = { now: 0, most: 0 }
const slowly = (content: string): Script => (req, res) => {
  load.now++
  load.most = Math.max(load.most, load.now)
  setTimeout(() => {
    load.now--
    completion(content)(req, res)
  }, 800)
}

const answer = (decisions: ReadonlyArray<Record<string, unknown>>) => JSON.stringify({ decisions })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`AI traders with an OpenAI-compatible model over ${storage.name}`, () => {
    layer(Server(storage), { timeout: "120 seconds" })((it) => {
      it.effect("the account's own model is asked with its key, and its JSON decisions are placed; tokens and cost are logged", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* modelAccount(token)
          yield* reset(completion(answer([
            { operation: "buy", symbol: "BTC", target_portion_of_balance: 0.1, leverage: 2, reason: "breakout" }
          ])))
          const done = yield* round(token, account.id)
          expect(done).toMatchObject({
            status: "completed",
            outcome: "traded",
            model: "test-model",
            prompt_tokens: 42,
            completion_tokens: 7,
            error: null,
            decisions: [{
              operation: "buy",
              symbol: "BTC",
              target_portion_of_balance: 0.1,
              leverage: 2,
              reason: "breakout"
            }]
          })
          expect(done.cost).toBeCloseTo((42 * 1000 + 7 * 2000) / 1_000_000, 10)
          expect(done.orders).toEqual([{ symbol: "BTC", order_id: expect.any(Number), status: "filled", error: null }])
          const [order] = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
          expect(order).toMatchObject({ id: done.orders[0].order_id, side: "buy", leverage: 2, status: "filled" })
          // One request, with the key as a bearer token and nowhere in the prompt kept.
          expect(fake.requests).toHaveLength(1)
          const sent = fake.requests[0]!
          expect(sent.authorization).toBe(`Bearer ${apiKey}`)
          expect(sent.body).toMatchObject({
            model: "test-model",
            temperature: 0,
            response_format: { type: "json_object" }
          })
          expect(sent.body.messages.map((m: any) => m.role)).toEqual(["system", "user"])
          expect(sent.body.messages[1].content).toContain(`"account":{"id":${account.id}`)
          expect(JSON.stringify(sent.body)).not.toContain(apiKey)
          expect(done.prompt).not.toContain(apiKey)
          expect(done.prompt).toContain(sent.body.messages[1].content)
        }))

      it.effect("an answer that does not decode is no trade, with the reason and the raw answer kept", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* modelAccount(token)
          for (
            const raw of [
              "I think you should buy BTC",
              answer([{ operation: "moon", symbol: "BTC", reason: "?" }]),
              answer([{ operation: "buy", symbol: "BTC", reason: "x", size: 3 }]),
              answer([{ operation: "buy", symbol: "BTC" }])
            ]
          ) {
            yield* reset(completion(raw))
            const done = yield* round(token, account.id)
            expect(done).toMatchObject({
              status: "completed",
              outcome: "no_trade",
              raw_answer: raw,
              decisions: null,
              orders: [],
              error: expect.stringMatching(/^invalid_answer: /)
            })
          }
          expect((yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders).toEqual([])
        }))

      it.effect("a 429 is tried again after its Retry-After; one that persists is no trade, rate_limited", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* modelAccount(token)
          yield* reset(
            status(429, { "retry-after": "2" }),
            completion(answer([{ operation: "hold", symbol: "BTC", reason: "wait" }]))
          )
          const retried = yield* round(token, account.id)
          expect(retried).toMatchObject({ outcome: "traded", decisions: [{ operation: "hold" }] })
          expect(retried.latency_ms).toBeGreaterThanOrEqual(2000)
          expect(fake.requests).toHaveLength(2)
          yield* reset(status(429, { "retry-after": "1" }), status(429, { "retry-after": "1" }), status(429))
          const limited = yield* round(token, account.id)
          expect(limited).toMatchObject({
            outcome: "no_trade",
            raw_answer: null,
            error: expect.stringMatching(/^rate_limited: /)
          })
          expect(fake.requests).toHaveLength(3)
        }))

      it.effect("one account's rounds never run at once, though the workers run other accounts' side by side", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const hold = answer([{ operation: "hold", symbol: "BTC", reason: "wait" }])
          const one = yield* modelAccount(token)
          yield* reset(slowly(hold), slowly(hold), slowly(hold))
          load.most = 0
          yield* queue(token, one.id)
          yield* queue(token, one.id)
          yield* queue(token, one.id)
          const rounds = yield* settled(token, one.id, 3)
          expect(rounds.map((r: any) => r.outcome)).toEqual(["traded", "traded", "traded"])
          expect(load.most).toBe(1)

          const two = yield* modelAccount(token)
          yield* reset(slowly(hold), slowly(hold))
          load.most = 0
          yield* queue(token, one.id)
          yield* queue(token, two.id)
          yield* settled(token, one.id, 4)
          yield* settled(token, two.id, 1)
          expect(load.most).toBe(2)
        }))

      it.effect("a model that does not answer in time is no trade, upstream_timeout; an internal base_url is not called", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* modelAccount(token)
          yield* reset(silent)
          // The model may take 2 minutes of the test clock; it moves 10 seconds at a time here.
          const timedOut = yield* round(token, account.id, TestClock.adjust("10 seconds"))
          expect(timedOut).toMatchObject({ outcome: "no_trade", error: expect.stringMatching(/^upstream_timeout: /) })
          expect(timedOut.latency_ms).toBeGreaterThanOrEqual(120_000)

          const inside = yield* modelAccount(token, "http://10.0.0.1/v1")
          yield* reset()
          const refused = yield* round(token, inside.id)
          expect(refused).toMatchObject({
            outcome: "no_trade",
            error: expect.stringMatching(/private|internal|address/)
          })
          expect(fake.requests).toHaveLength(0)
        }))
    })
  })
}
