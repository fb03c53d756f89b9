import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect } from "@effect/vitest"
import { type AutomationOptions, PlatformLive, type PlatformOptions } from "@trading-platform/core"
import { TestConfig, type TestStorage } from "@trading-platform/core/testing"
import { ApiLive, requestContext } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import { createServer } from "node:http"
import { marketNow } from "./Backtests.js"
import { call } from "./TestServer.js"

/**
 * Buys half the free cash when flat and holds otherwise; `params.close` closes instead, and
 * `params.leverage` is the leverage it asks for. Its reason shows what it was fed at the last bar.
 */
export const automationProgram = `export function decide(data) {
  const seen = "candles=" + data.candles.length + " balance=" + data.balance + " last=" + data.bar.time
  if (data.params.close) return { operation: "close", reason: seen }
  if (data.position) return { operation: "hold" }
  return { operation: "buy", target_portion_of_balance: 0.5, leverage: data.params.leverage ?? null, reason: seen }
}
`

/**
 * The real server on a random port with the scheduler (and exit watcher), one run worker and the
 * PnL refresher, at `marketNow` on the test clock, with `config` over the test options; the platform's services (the signal engine among them) stay in
 * reach of the tests.
 */
export const AutomationServer = (
  storage: TestStorage,
  automation: Partial<AutomationOptions> = {},
  config: Partial<PlatformOptions> = {}
) =>
  HttpApiBuilder.serve(requestContext).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ApiLive),
    Layer.provideMerge(PlatformLive),
    Layer.provideMerge(TestConfig(storage, {
      ...config,
      automation: {
        enabled: true,
        concurrency: 1,
        pollInterval: Duration.seconds(1),
        lease: Duration.seconds(30),
        maxAttempts: 3,
        pnlRefreshInterval: Duration.minutes(1),
        ...automation
      }
    })),
    Layer.provide(Layer.effectDiscard(TestClock.setTime(marketNow)))
  )

export const createProgram = (token: string, code = automationProgram) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/api/programs", { token, body: { name: "Live", code } })
    expect(reply.status).toBe(201)
    return reply.body.id as number
  })

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/**
 * Polls the list `key` that GET `path` answers (on the real clock: workers run in real time) until
 * `done` holds, or fails at the deadline.
 */
export const waitForList = (
  token: string,
  path: string,
  key: string,
  done: (items: ReadonlyArray<any>) => boolean,
  /** Run between polls, e.g. a step of the test clock. */
  tick: Effect.Effect<void> = Effect.void,
  deadlineMs = 30_000
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const reply = yield* call("GET", path, { token })
      expect(reply.status).toBe(200)
      if (done(reply.body[key])) return reply.body[key] as ReadonlyArray<any>
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`${key} at the deadline: ${JSON.stringify(reply.body[key])}`))
      }
      yield* tick
      yield* realPause
    }
  })

/** Polls the binding's runs until `done` holds (see `waitForList`). */
export const waitForRuns = (
  token: string,
  programId: number,
  bindingId: number,
  done: (runs: ReadonlyArray<any>) => boolean,
  tick: Effect.Effect<void> = Effect.void,
  deadlineMs = 30_000
) => waitForList(token, `/api/programs/${programId}/bindings/${bindingId}/runs`, "runs", done, tick, deadlineMs)

export const allFinished = (count: number) => (runs: ReadonlyArray<any>) =>
  runs.length >= count && runs.every((r) => r.status === "completed" || r.status === "failed")

/**
 * Buys half the free cash when flat, with `params.take_profit` and `params.stop_loss` as its exit
 * prices, or (with `params.exit_width`) exits that far either side of the last close.
 */
export const exitProgram = `export function decide(data) {
  if (data.position) return { operation: "hold" }
  const w = data.params.exit_width
  return {
    operation: "buy",
    target_portion_of_balance: 0.5,
    take_profit_price: w ? data.bar.close * (1 + w) : data.params.take_profit,
    stop_loss_price: w ? data.bar.close * (1 - w) : data.params.stop_loss
  }
}
`
