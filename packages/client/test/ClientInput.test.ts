import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { createClient, makeClient, RequestInputError, TradingApiError } from "@trading-platform/client"
import { ProgramId } from "@trading-platform/core/contract"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { BacktestServer, shortRun } from "../../server/test/support/Backtests.js"
import { baseUrl, uniqueUser } from "../../server/test/support/TestServer.js"

const code = "export function decide() { return { operation: 'hold' } }"

const signedIn = Effect.gen(function*() {
  const url = yield* baseUrl
  const user = uniqueUser("input")
  const anonymous = createClient({ baseUrl: url })
  yield* Effect.promise(() => anonymous.users.register({ payload: user }))
  const login = yield* Effect.promise(() =>
    anonymous.users.login({ payload: { email: user.email, password: user.password } })
  )
  return { url, token: login.session_token, client: createClient({ baseUrl: url, token: login.session_token }) }
})

describe("the clients with only the required fields, and with bad input", () => {
  layer(BacktestServer(testStorages[0]!), { timeout: "120 seconds" })((it) => {
    it.effect("a backtest submitted with only symbol, timeframe, start and end gets the API's defaults", () =>
      Effect.gen(function*() {
        const { client } = yield* signedIn
        const program = yield* Effect.promise(() => client.programs.create({ payload: { name: "hold", code } }))
        const backtest = yield* Effect.promise(() =>
          client.backtests.submit({ path: { id: program.id }, payload: shortRun as any })
        )
        expect(backtest).toMatchObject({
          exchange: "venue1",
          initial_balance: 10000,
          fee_rate: 0.00035,
          slippage: 0.0005,
          leverage: 1
        })
        const history = yield* Effect.promise(() => client.backtests.history({ urlParams: {} }))
        expect(history.backtests.map((b) => b.id)).toEqual([backtest.id])
      }))

    it.effect("the Promise client refuses input that breaks the contract before sending, saying what is wrong", () =>
      Effect.gen(function*() {
        const { client } = yield* signedIn
        const refused = yield* Effect.flip(Effect.tryPromise({
          try: () =>
            client.backtests.submit({
              path: { id: ProgramId.make(1) },
              payload: { ...shortRun, timeframe: "2h", leverage: 500 } as any
            }),
          catch: (e) => e
        }))
        expect(refused).toBeInstanceOf(TradingApiError)
        expect(refused).toMatchObject({
          code: "invalid_input",
          status: undefined,
          message:
            "Invalid request, not sent: payload.timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'; " +
            "payload.leverage must be a number between 1 and 125; got 500",
          issues: [
            { path: "payload.timeframe", message: "must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'" },
            { path: "payload.leverage", message: "must be a number between 1 and 125; got 500" }
          ]
        })
      }))

    it.effect("the Effect client fails such input with a RequestInputError, a ParseError as its type declares", () =>
      Effect.gen(function*() {
        const { token, url } = yield* signedIn
        const client = yield* makeClient({ baseUrl: url, token })
        const error = yield* Effect.flip(client.market.klines({ urlParams: { symbol: "BTC", limit: 0 } }))
        expect(error).toBeInstanceOf(RequestInputError)
        expect(error._tag).toBe("ParseError")
        expect(error.message).toBe(
          "Invalid request, not sent: urlParams.limit must be a number between 1 and 1000; got 0"
        )
      }).pipe(Effect.provide(FetchHttpClient.layer)))
  })
})
