/**
 * Type-level test (checked by `npx tsc -b` and by RequiredFields.test.ts, never run): every
 * operation of both clients called with only the fields the API requires. A field the API
 * defaults that a client demands again breaks the type-check here.
 */
import type { PromiseClient, TradingClient } from "@trading-platform/client"
import type { AccountId, BacktestId, ProgramId, SessionId } from "@trading-platform/core/contract"
import { expectTypeOf } from "vitest"

declare const effect: TradingClient
declare const promise: PromiseClient
declare const accountId: AccountId
declare const programId: ProgramId
declare const backtestId: BacktestId
declare const sessionId: SessionId

const account = { path: { account_id: accountId } }
const program = { path: { id: programId } }
const backtest = { path: { id: backtestId } }
const history = { version: "1.0", decision_logs: [], trades: [] } as const
const range = { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-02-01T00:00:00Z" } as const

/** One call per operation, as each client's own methods take it. */
const everyOperation = (c: TradingClient | PromiseClient) => [
  c.health(),
  c.users.register({ payload: { email: "ada@example.com", password: "correct horse", username: "ada" } }),
  c.users.login({ payload: { email: "ada@example.com", password: "correct horse" } }),
  c.users.logout(),
  c.users.me(),
  c.users.deleteMe({ payload: { password: "correct horse" } }),
  c.users.sessions({ urlParams: {} }),
  c.users.revokeSession({ path: { id: sessionId } }),
  c.users.changePassword({ payload: { current_password: "correct horse", new_password: "battery staple" } }),
  c.accounts.create({ payload: { name: "main" } }),
  c.accounts.list({ urlParams: {} }),
  c.accounts.get(account),
  c.accounts.update({ ...account, payload: {} }),
  c.accounts.remove(account),
  c.market.prices({ payload: { symbols: ["BTC"] } }),
  c.market.klines({ urlParams: { symbol: "BTC" } }),
  c.market.query({ payload: { symbols: ["BTC"] } }),
  c.market.symbols({ urlParams: {} }),
  c.venueAccounts.storeWallet({
    ...account,
    payload: { environment: "testnet", wallet_address: `0x${"a".repeat(40)}`, private_key: `0x${"b".repeat(64)}` }
  }),
  c.venueAccounts.testWallet(account),
  c.venueAccounts.setupVenue2({
    ...account,
    payload: { environment: "testnet", api_key: "AK0123456789abcdef", secret_key: "SK0123456789abcdef" }
  }),
  c.trader.export(account),
  c.trader.preview({ ...account, payload: history }),
  c.trader.import({ ...account, payload: history }),
  c.programs.create({ payload: { name: "p", code: "export function decide() { return { operation: 'hold' } }" } }),
  c.programs.list({ urlParams: {} }),
  c.programs.get(program),
  c.programs.update({ ...program, payload: { name: "renamed" } }),
  c.programs.delete(program),
  c.backtests.submit({ ...program, payload: range }),
  c.backtests.history({ urlParams: {} }),
  c.backtests.get(backtest),
  c.backtests.trades({ ...backtest, urlParams: {} }),
  c.backtests.cancel(backtest),
  c.analytics.programSummary({ urlParams: {} })
]

export const effectCalls = everyOperation(effect)
export const promiseCalls = everyOperation(promise)

// The defaults are optional, not gone: a wrong value is still refused.
// @ts-expect-error leverage is a number
effect.backtests.submit({ ...program, payload: { ...range, leverage: "high" } })
// @ts-expect-error timeframe is required
promise.backtests.submit({ ...program, payload: { symbol: "BTC", start: range.start, end: range.end } })
// The Promise client takes list calls without their all-optional params; the Effect client cannot
// (HttpApiClient's request type demands `urlParams`).
export const promiseWithoutParams = [
  promise.accounts.list(),
  promise.programs.list(),
  promise.users.sessions(),
  promise.backtests.history(),
  promise.market.symbols(),
  promise.analytics.programSummary(),
  promise.backtests.trades(backtest)
]
// @ts-expect-error the Effect client demands urlParams
effect.accounts.list()
// @ts-expect-error params with a required field stay required
promise.market.klines()
// @ts-expect-error the path is still required
promise.backtests.trades()
expectTypeOf<NonNullable<Parameters<typeof promise.backtests.history>[0]>["urlParams"]>().toEqualTypeOf<
  {
    readonly program_id?: ProgramId | undefined
    readonly account_id?: AccountId | undefined
    readonly status?: "queued" | "running" | "completed" | "failed" | "cancelled" | undefined
    readonly limit?: number
    readonly offset?: number
  } | undefined
>()
