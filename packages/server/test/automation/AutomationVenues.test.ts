import { afterAll, describe, expect, layer } from "@effect/vitest"
import {
  type FakeVenue,
  fakeVenue1Wallet,
  fakeVenue2Keys,
  startFakeVenue1,
  startFakeVenue2,
  testOptions,
  testStorages
} from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount, venue2Keys, wallet } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, exitProgram, waitForRuns } from "../support/Automation.js"
import { openSse, openWs } from "../support/StreamClients.js"
import { call, signUp } from "../support/TestServer.js"

// A pair of fake venues per storage: each platform's accounts are the venues' own (the same ids
// and test clock on both storages would otherwise give two platforms the same client order ids).
const fakes = await Promise.all(testStorages.map(async () => ({
  fake1: await startFakeVenue1(),
  fake2: await startFakeVenue2()
})))
afterAll(async () => {
  for (const { fake1, fake2 } of fakes) {
    await fake1.close()
    await fake2.close()
  }
})

const { venues } = testOptions({ kind: "pglite", dataDir: "memory://" })
// One retry, as in production: an order must still reach the venue once.
const configOf = (fake1: FakeVenue, fake2: FakeVenue) => ({
  venues: {
    ...venues,
    venue1: { mode: "http", baseUrl: fake1.url, timeout: Duration.seconds(1), retries: 1 },
    venue2: { mode: "http", baseUrl: fake2.url, timeout: Duration.seconds(1), retries: 1 }
  }
} as const)

// The scheduler (and exit watcher) polls every second of the test clock.
const tick = TestClock.adjust("1 second")

/**
 * An account on venue2 with its keys stored (checked at the fake), or on venue1 with a wallet:
 * each a venue account of its own, so the reconciliation finds there only what the account did
 * (a `privateKey` the fake does not know signs for the shared wallet).
 */
const venueAccount = (token: string, venue: "venue1" | "venue2", privateKey?: string) =>
  Effect.gen(function*() {
    const name = `${venue} bot ${Math.random().toString(36).slice(2, 8)}`
    if (venue === "venue2") {
      const account = yield* createAccount(token, { name })
      const keys = fakeVenue2Keys()
      const setup = yield* call("POST", `/api/venue2/accounts/${account.id}/setup`, {
        token,
        body: { ...venue2Keys, ...keys }
      })
      expect(setup.status).toBe(200)
      return { ...account, venueKey: keys.api_key }
    }
    const account = yield* createAccount(token, { name, venue1_enabled: true, venue1_environment: "testnet" })
    const stored = yield* call("PUT", `/api/venue1/accounts/${account.id}/wallet`, {
      token,
      body: privateKey === undefined ? { ...wallet, ...fakeVenue1Wallet() } : { ...wallet, private_key: privateKey }
    })
    expect(stored.status).toBe(200)
    return account
  })

/** Binds the program to the account for the symbol (daily, so only manual runs fire) and runs it once by hand. */
const runOnce = (
  token: string,
  program: number,
  accountId: number,
  params: Record<string, unknown> = {},
  symbol = "BTC"
) =>
  Effect.gen(function*() {
    const binding = yield* call("POST", `/api/programs/${program}/bindings`, {
      token,
      body: { account_id: accountId, symbols: [symbol], interval_minutes: 1440, params }
    })
    expect(binding.status).toBe(201)
    yield* call("POST", `/api/programs/${program}/bindings/${binding.body.id}/run`, { token })
    const [run] = yield* waitForRuns(token, program, binding.body.id, allFinished(1))
    return run
  })

const ordersOf = (token: string, accountId: number) =>
  Effect.map(call("GET", `/api/account/${accountId}/orders`, { token }), (r) => r.body.orders as Array<any>)
const positionsOf = (token: string, accountId: number) =>
  Effect.map(call("GET", `/api/account/${accountId}/positions`, { token }), (r) => r.body.positions as Array<any>)

for (const [i, storage] of testStorages.entries()) {
  const { fake1, fake2 } = fakes[i]!
  describe.skipIf(!storage.available)(`automation on the HTTP venues (local fakes) over ${storage.name}`, () => {
    // The order path on live venues, without the bias check a live binding needs (BiasChecks.test.ts).
    layer(
      AutomationServer(
        storage,
        { reconcileInterval: Duration.seconds(10), requireBiasCheck: false },
        configOf(fake1, fake2)
      ),
      {
        timeout: "120 seconds"
      }
    )((it) => {
      it.effect("a run's order goes to the account's venue with the order's key, and fills into the ledger", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          fake1.orders = "ok"
          fake2.orders = "ok"
          for (
            const [venue, fake, price, venueOrderId] of [
              ["venue2", fake2, 65010.5, "42"],
              ["venue1", fake1, 65000.5, "77"]
            ] as const
          ) {
            const account = yield* venueAccount(token, venue)
            const keysBefore = fake.clientOrderIds.length
            const run = yield* runOnce(token, program, account.id)
            expect(run).toMatchObject({ status: "completed", attempts: 1, error: null })
            const [order] = yield* ordersOf(token, account.id)
            expect(order).toMatchObject({
              run_id: run.id,
              exchange: venue,
              route: "venue",
              trigger: "run",
              side: "buy",
              status: "filled",
              venue_order_id: venueOrderId,
              price
            })
            // The venue saw one order, under a client order id of its own format.
            expect(fake.clientOrderIds.slice(keysBefore)).toEqual([
              expect.stringMatching(venue === "venue1" ? /^0x[0-9a-f]{32}$/ : /^[0-9a-f]{32}$/)
            ])
            // The quantity went out rounded down to BTC's lot, as a plain decimal, and venue2 was asked
            // for the full result (its acknowledgement alone would leave the order looking open).
            const sent = venue === "venue2"
              ? new URLSearchParams(fake2.orderQueries.at(-1)).get("quantity")!
              : fake1.orderBodies.at(-1).action.orders[0].s
            expect(sent).toMatch(venue === "venue2" ? /^0\.\d{1,3}$/ : /^0\.\d{1,5}$/)
            if (venue === "venue2") {
              expect(new URLSearchParams(fake2.orderQueries.at(-1)).get("newOrderRespType")).toBe("RESULT")
            }
            expect(order.quantity).toBe(Number(sent))
            expect(yield* positionsOf(token, account.id)).toEqual([
              expect.objectContaining({ symbol: "BTC", exchange: venue, side: "long", entry_price: price })
            ])
            // The venue reports no fee: the paper rate is charged.
            const after = (yield* call("GET", `/api/account/${account.id}`, { token })).body
            expect(order.fee).toBeCloseTo(order.quantity * price * 0.00035, 8)
            expect(after.frozen_cash).toBeCloseTo(order.quantity * price, 6)
            expect(after.current_cash).toBeCloseTo(10_000 - order.quantity * price - order.fee, 6)
          }
        }))

      it.effect("a venue that refuses the order: the order is rejected with the venue's reason and nothing fills", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          // venue1 does not know this signer.
          const account = yield* venueAccount(token, "venue1", `0x${"11".repeat(32)}`)
          const run = yield* runOnce(token, program, account.id)
          expect(run).toMatchObject({ status: "completed", attempts: 1 })
          expect(run.error).toMatch(/rejected: venue1 refused the action: User or API Wallet .* does not exist/)
          const [order] = yield* ordersOf(token, account.id)
          expect(order).toMatchObject({ route: "venue", status: "rejected", price: null, filled_at: null })
          expect(yield* positionsOf(token, account.id)).toEqual([])
          const unchanged = (yield* call("GET", `/api/account/${account.id}`, { token })).body
          expect({ cash: unchanged.current_cash, frozen: unchanged.frozen_cash }).toEqual({ cash: 10_000, frozen: 0 })
        }))

      it.effect("an order below the symbol's minimum notional or above its leverage cap is rejected before it is sent", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          fake1.orders = "ok"
          fake2.orders = "ok"
          // 0.01 % of the cash, about 1 USD: less than one of venue2's BTC lots (0.001), and one lot
          // of venue1's (0.00001) is worth less than its 10 USD minimum.
          const tiny = yield* createProgram(
            token,
            `export function decide(data) {
  return data.position ? { operation: "hold" } : { operation: "buy", target_portion_of_balance: 0.0001 }
}
`
          )
          // ETH is capped at 25x on the fake venue1, below the account's 50x.
          const leveraged = yield* createProgram(token)
          for (
            const [venue, program, params, symbol, why] of [
              [
                "venue2",
                tiny,
                {},
                "BTC",
                /Quantity 0 BTC \(0\.\d+ in lots of 0\.001\) is below the minimum of 0\.001 BTC$/
              ],
              [
                "venue1",
                tiny,
                {},
                "BTC",
                // At the price the order would fill at: 65000 with the 0.05 % slippage.
                /Notional 0\.65 USD \(0\.00001 BTC at 65032\.5\) is below BTC's minimum of 10 USD$/
              ],
              [
                "venue1",
                leveraged,
                { leverage: 30 },
                "ETH",
                /Leverage 30 is above ETH's cap of 25 at a notional of [\d.]+ USD$/
              ]
            ] as const
          ) {
            const fake = venue === "venue2" ? fake2 : fake1
            const account = yield* venueAccount(token, venue)
            const sentBefore = fake.clientOrderIds.length
            const run = yield* runOnce(token, program, account.id, params, symbol)
            expect(run).toMatchObject({ status: "completed", attempts: 1 })
            expect(run.error).toMatch(/^Order \d+ rejected: /)
            expect(run.error).toMatch(why)
            const [order] = yield* ordersOf(token, account.id)
            expect(order).toMatchObject({ route: "venue", status: "rejected", price: null, venue_order_id: null })
            expect(order.error).toMatch(why)
            // The venue never saw it.
            expect(fake.clientOrderIds.length).toBe(sentBefore)
            expect(yield* positionsOf(token, account.id)).toEqual([])
          }
        }))

      it.effect("a venue failing after it took the order: the order is looked up by its key, booked, and never sent again", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          for (const behavior of ["error500", "unavailable503", "drop"] as const) {
            const account = yield* venueAccount(token, "venue2")
            const sent = fake2.orderQueries.length
            const keysBefore = fake2.clientOrderIds.length
            fake2.orders = behavior
            const run = yield* runOnce(token, program, account.id).pipe(Effect.ensuring(
              Effect.sync(() => (fake2.orders = "ok"))
            ))
            expect(run).toMatchObject({ status: "completed", attempts: 1, error: null })
            const [order] = yield* ordersOf(token, account.id)
            // What the venue executed, as its own record of the order says.
            expect(order).toMatchObject({ status: "filled", price: 65010.5, route: "venue" })
            // Sent once, not retried by the client nor by another attempt; then looked up by its key.
            expect(fake2.orderQueries.length).toBe(sent + 1)
            expect(fake2.clientOrderIds.length).toBe(keysBefore + 1)
            expect(yield* positionsOf(token, account.id)).toEqual([
              expect.objectContaining({ symbol: "BTC", side: "long", size: order.quantity })
            ])
          }
        }))

      it.effect("the reconciliation runs on its interval, across a clock jump, and lists its events to the owner only", () =>
        Effect.gen(function*() {
          const { email, password, token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* venueAccount(token, "venue2")
          const run = yield* runOnce(token, program, account.id)
          expect(run).toMatchObject({ status: "completed", error: null })
          // A second session for the SSE stream: one stream at a time per token.
          const streamToken =
            (yield* call("POST", "/api/users/login", { body: { email, password } })).body.session_token
          const [order] = yield* ordersOf(token, account.id)
          const url = `/api/account/${account.id}/reconciliations`
          expect((yield* call("GET", url, { token })).body).toEqual({ reconciliations: [] })
          // The owner's streams hear the events as they are recorded: the WebSocket channel and the SSE stream.
          const ws = yield* openWs(`?session_token=${token}`)
          ws.send({ type: "subscribe", channel: "reconciliations" })
          expect(yield* Effect.promise(() => ws.next())).toEqual({ type: "subscribed", channel: "reconciliations" })
          const sse = yield* openSse("?symbols=BTC", { token: streamToken })
          yield* Effect.promise(() => sse.next("snapshot"))
          // Half the position is sold on the venue by hand, then the clock jumps past the interval (10 s here).
          const venue = fake2.accounts.get((account as any).venueKey)!
          venue.positions.set("BTC", { ...venue.positions.get("BTC")!, szi: order.quantity / 2 })
          yield* TestClock.adjust("1 minute")
          const deadline = Date.now() + 30_000
          let events: Array<any> = []
          while (events.length === 0 && Date.now() < deadline) {
            yield* tick
            events = (yield* call("GET", url, { token })).body.reconciliations
          }
          expect(events).toEqual([expect.objectContaining({
            account_id: account.id,
            exchange: "venue2",
            kind: "position_resized",
            symbol: "BTC",
            ledger_size: order.quantity,
            venue_size: order.quantity / 2,
            message: expect.stringMatching(/^the venue holds/)
          })])
          expect(yield* positionsOf(token, account.id)).toEqual([
            expect.objectContaining({
              symbol: "BTC",
              size: order.quantity / 2,
              protected_at_venue: false,
              adopted: false
            })
          ])
          const streamed = yield* Effect.promise(() => ws.next((m) => m.type === "event"))
          expect(streamed).toMatchObject({
            channel: "reconciliations",
            data: { id: events[0].id, kind: "position_resized" }
          })
          const update = yield* Effect.promise(() => sse.next("update"))
          expect(update.data).toMatchObject({
            kind: "reconciliation",
            event: { id: events[0].id, account_id: account.id }
          })
          ws.socket.close()
          sse.close()
          // One order at the venue: nothing went out twice across the jump.
          expect(Array.from(venue.orders.values()).filter((o) => o.trigger === null)).toHaveLength(1)
          const other = yield* signUp()
          for (
            const [path, who, status, code] of [
              [url, undefined, 401, "unauthorized"],
              [url, other.token, 403, "forbidden"],
              ["/api/account/987654/reconciliations", token, 404, "not_found"],
              [`${url}?limit=0`, token, 400, "invalid_input"]
            ] as const
          ) {
            const reply = yield* call("GET", path, who === undefined ? {} : { token: who })
            expect([reply.status, reply.body.code]).toEqual([status, code])
          }
        }))

      it.effect("a stop loss on the HTTP venue is watched by the platform and closed with a market order there", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, exitProgram)
          const account = yield* venueAccount(token, "venue2")
          const keysBefore = fake2.clientOrderIds.length
          // The fake fills at 65010.5 and marks BTC at 65000: under a stop at 65005, which the venue
          // refuses to rest (it would trigger at once), so the platform's watcher keeps it.
          const run = yield* runOnce(token, program, account.id, { stop_loss: 65_005 })
          expect(run).toMatchObject({ status: "completed", decision: { stop_loss_price: 65_005 } })
          const deadline = Date.now() + 30_000
          while ((yield* positionsOf(token, account.id)).length > 0 && Date.now() < deadline) {
            yield* tick
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
          }
          const [exit, entry] = yield* ordersOf(token, account.id)
          expect(entry).toMatchObject({ trigger: "run", status: "filled" })
          expect(exit).toMatchObject({
            run_id: null,
            binding_id: entry.binding_id,
            program_id: program,
            route: "venue",
            trigger: "stop_loss",
            side: "sell",
            status: "filled",
            price: 65010.5
          })
          expect(exit.quantity).toBeCloseTo(entry.quantity, 10)
          // The entry and its exit: two orders the venue took.
          expect(fake2.clientOrderIds.length).toBe(keysBefore + 2)
          expect(yield* positionsOf(token, account.id)).toEqual([])
          // Later passes find nothing left to close.
          yield* tick
          yield* tick
          expect(yield* ordersOf(token, account.id)).toHaveLength(2)
        }))
    })
  })
}
