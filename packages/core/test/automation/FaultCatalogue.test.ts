import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  AutomationRunsLive,
  Bindings,
  LedgerRepo,
  PlatformConfig,
  PlatformLive,
  type PlatformOptions,
  Programs,
  Reconciliation,
  type StorageConfig,
  VenueAccounts
} from "@trading-platform/core"
import { type Context, Duration, Effect, Layer, Scope } from "effect"
import { OrderPlacement } from "../../src/automation/OrderPlacement.js"
import type { CurrentUserShape } from "../../src/users/Authentication.js"
import type { Exchange } from "../../src/venues/Venue.js"
import { newCaller } from "../support/Callers.js"
import {
  type FakeAccount,
  type FakeVenue,
  fakeVenue1Signer,
  fakeVenue1Wallet,
  fakeVenue2Keys,
  startFakeVenue1,
  startFakeVenue2
} from "../support/FakeVenues.js"
import { serverProcess } from "../support/ServerProcess.js"
import { testDatabaseUrl, testOptions, testStorages } from "../support/TestStorage.js"

/**
 * The fault catalogue of live automation (docs/automation.md): each fault is injected by the fake
 * venue (its answers, its connection, its account) at a given moment, never by sleeping. After
 * each: the venue's positions equal the ledger's (no untracked exposure), no order went out twice,
 * and one reconciliation pass leaves nothing unresolved. The catalogue runs against each fake venue.
 */

const fakes = { venue1: await startFakeVenue1(), venue2: await startFakeVenue2() }
afterAll(() => Promise.all([fakes.venue1.close(), fakes.venue2.close()]))

/**
 * A fake venue the catalogue runs against. Every fault applies to both: each looks orders up by
 * their client order id, rests trigger orders, takes reduce-only closes and has a dead-man switch.
 */
interface VenueUnderTest {
  readonly exchange: Exchange
  readonly fake: FakeVenue
  /** The price a market BTC order fills at there. */
  readonly fillPrice: number
  /** Gives the account credentials of its own for the venue; answers the fake's key for its venue account. */
  readonly connect: (caller: CurrentUserShape, account: AccountId) => Effect.Effect<string, unknown, VenueAccounts>
  /** The quantity of the order request the fake received at `index`. */
  readonly sentQuantity: (index: number) => number
}

const venuesUnderTest: ReadonlyArray<VenueUnderTest> = [
  {
    exchange: "venue1",
    fake: fakes.venue1,
    fillPrice: 65_000.5,
    connect: (caller, account) => {
      const wallet = fakeVenue1Wallet()
      return Effect.as(
        Effect.flatMap(VenueAccounts, (v) => v.storeWallet(caller, account, { environment: "testnet", ...wallet })),
        fakeVenue1Signer(wallet.private_key)
      )
    },
    sentQuantity: (index) => Number(fakes.venue1.orderBodies[index].action.orders[0].s)
  },
  {
    exchange: "venue2",
    fake: fakes.venue2,
    fillPrice: 65_010.5,
    connect: (caller, account) => {
      const keys = fakeVenue2Keys()
      return Effect.as(
        Effect.flatMap(VenueAccounts, (v) => v.setupVenue2(caller, account, { environment: "testnet", ...keys })),
        keys.api_key
      )
    },
    sentQuantity: (index) => Number(new URLSearchParams(fakes.venue2.orderQueries[index]).get("quantity"))
  }
]

/** Buys half the free cash when flat (with the stop loss and take profit of its params), holds otherwise. */
const program = `export function decide(data) {
  if (data.position) return { operation: "hold" }
  const entry = data.params.limit ? { order_type: "limit", entry_price: data.params.limit } : {}
  return {
    operation: "buy",
    target_portion_of_balance: 0.5,
    stop_loss_price: data.params.stop_loss ?? null,
    take_profit_price: data.params.take_profit ?? null,
    ...entry
  }
}
`

describe.each(venuesUnderTest)("the fault catalogue of live automation, against the fake $exchange", (v) => {
  const fake = v.fake

  const venueOptions = (timeoutMs: number): Partial<PlatformOptions> => {
    const defaults = testOptions({ kind: "pglite", dataDir: "memory://" }).venues
    return {
      venues: {
        ...defaults,
        [v.exchange]: { mode: "http", baseUrl: fake.url, timeout: Duration.millis(timeoutMs), retries: 1 }
      }
    }
  }

  const automation = (concurrency: number): PlatformOptions["automation"] => ({
    enabled: false,
    concurrency,
    pollInterval: Duration.millis(20),
    lease: Duration.seconds(2),
    maxAttempts: 2,
    pnlRefreshInterval: Duration.minutes(1),
    // Faults of the order path, not of the bias check a live binding needs.
    requireBiasCheck: false
  })

  /** One platform instance on the storage with `workers` run workers, until the scope closes. */
  const startInstance = (storage: StorageConfig, scope: Scope.Scope, workers = 1) =>
    Layer.buildWithScope(
      PlatformLive.pipe(
        Layer.provideMerge(PlatformConfig.layer(testOptions(storage, {
          automation: automation(workers),
          ...venueOptions(1_000)
        })))
      ),
      scope
    )

  type Instance = Effect.Effect.Success<ReturnType<typeof startInstance>>
  const on = <A, E>(instance: Instance, effect: Effect.Effect<A, E, any>) =>
    Effect.provide(effect, instance as Context.Context<any>)

  /** A user with an account of its own at the fake venue (its own credentials) and the program bound to it for `symbol`. */
  const liveAccount = (instance: Instance, params: Record<string, unknown> = {}, symbol = "BTC") =>
    on(
      instance,
      Effect.gen(function*() {
        const caller = yield* newCaller("faults")
        const account = yield* Effect.flatMap(
          Accounts,
          (a) => a.create(caller, { name: "live", venue1_enabled: v.exchange === "venue1" })
        )
        const key = yield* v.connect(caller, account.id)
        const programId = (yield* Effect.flatMap(Programs, (p) =>
          p.create(caller, { name: "Buy once", code: program })))
          .id
        const binding = yield* Effect.flatMap(Bindings, (b) =>
          b.create(caller, programId, {
            account_id: account.id,
            symbols: [symbol],
            timeframe: "1h",
            interval_minutes: 1440,
            signal_pool_ids: [],
            params,
            enabled: true
          }))
        return {
          caller,
          accountId: account.id,
          programId,
          bindingId: binding.id,
          venueAccount: () => fake.accounts.get(key)
        }
      })
    )

  type Live = Effect.Effect.Success<ReturnType<typeof liveAccount>>

  const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

  /** The same account and program bound again, for `symbol` with `params`: a second binding of the account. */
  const alsoBound = (instance: Instance, live: Live, symbol: string, params: Record<string, unknown>) =>
    on(
      instance,
      Effect.map(
        Effect.flatMap(Bindings, (b) =>
          b.create(live.caller, live.programId, {
            account_id: live.accountId,
            symbols: [symbol],
            timeframe: "1h",
            interval_minutes: 1440,
            signal_pool_ids: [],
            params,
            enabled: true
          })),
        (binding): Live => ({ ...live, bindingId: binding.id })
      )
    )

  /** An instance on PGlite, in the test's scope, and a live account on it (see `liveAccount`). */
  const liveOnPglite = (params: Record<string, unknown> = {}, symbol = "BTC") =>
    Effect.gen(function*() {
      const instance = yield* startInstance(yield* testStorages[0]!.storage, yield* Effect.scope)
      return { instance, live: yield* liveAccount(instance, params, symbol) }
    })

  /** Queues a run of the binding now and waits (on the real clock: workers run in real time) until it has finished. */
  const runOnce = (instance: Instance, live: Live) =>
    on(
      instance,
      Effect.gen(function*() {
        const bindings = yield* Bindings
        const [queued] = (yield* bindings.runNow(live.caller, live.programId, live.bindingId)).runs
        const deadline = Date.now() + 60_000
        for (;;) {
          const run = (yield* bindings.listRuns(live.caller, live.programId, live.bindingId, { limit: 50, offset: 0 }))
            .runs.find((r) => r.id === queued!.id)!
          if (run.status === "completed" || run.status === "failed") return run
          if (Date.now() > deadline) return yield* Effect.die(new Error(`run at the deadline: ${JSON.stringify(run)}`))
          yield* realPause
        }
      })
    )

  /**
   * Runs the binding into an outage (a name that no longer resolves) that begins as the venue takes
   * the order and lasts past the run's attempts: the run fails with its order sent, its answer lost.
   */
  const runIntoOutage = (instance: Instance, live: Live) =>
    Effect.gen(function*() {
      fake.afterOrder = () => {
        fake.behavior = "unreachable"
        fake.afterOrder = () => {}
      }
      const run = yield* runOnce(instance, live).pipe(Effect.ensuring(Effect.sync(() => (fake.behavior = "ok"))))
      expect(run.status).toBe("failed")
    })

  /** The ledger's orders of the account, oldest first. */
  const ordersOf = (instance: Instance, live: Live) =>
    on(
      instance,
      Effect.map(
        Effect.flatMap(LedgerRepo, (l) => l.orders({ account_id: live.accountId, limit: 100, offset: 0 })),
        (orders) => [...orders].reverse()
      )
    )

  /** One reconciliation pass over the account. */
  const reconcile = (instance: Instance, live: Live) =>
    on(
      instance,
      Effect.flatMap(Reconciliation, (r) =>
        r.account({ account_id: live.accountId, user_id: live.caller.id, exchange: v.exchange }))
    )

  /**
   * The catalogue's invariants: the venue's positions equal the ledger's, no order is left between
   * sent and known, and no client order id went out twice (the fake venue would refuse it, so each
   * of its orders has a key of its own).
   */
  const converged = (instance: Instance, live: Live) =>
    Effect.gen(function*() {
      const venue: FakeAccount | undefined = live.venueAccount()
      const theirs = Object.fromEntries(Array.from(venue?.positions ?? [], ([coin, p]) => [coin, p.szi]))
      const ours = yield* on(
        instance,
        Effect.flatMap(LedgerRepo, (l) => l.positionsAt({ account_id: live.accountId, exchange: v.exchange }))
      )
      expect(Object.fromEntries(ours.map((p) => [p.symbol, p.side === "long" ? p.size : -p.size]))).toEqual(theirs)
      const orders = yield* ordersOf(instance, live)
      expect(orders.filter((o) => o.status === "pending" || o.status === "submitted")).toEqual([])
      const keys = Array.from(venue?.orders.values() ?? [], (o) => o.cloid).filter((k) => k !== null)
      expect(new Set(keys).size).toBe(keys.length)
      return orders
    })

  const eventsOf = (instance: Instance, live: Live) =>
    on(
      instance,
      Effect.map(
        Effect.flatMap(Reconciliation, (r) => r.list(live.caller, live.accountId, { limit: 50, offset: 0 })),
        (l) => l.reconciliations.map((e) => e.kind)
      )
    )

  /** Runs a statement on the instance's database: what no service does in these cases. */
  const query = <A>(instance: Instance, statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    on(instance, Effect.flatMap(SqlClient.SqlClient, statement))

  /** Removes the account's venue credentials; answers the effect that puts the same ones back. */
  const removeCredentials = (instance: Instance, live: Live) =>
    Effect.map(
      query(instance, (sql) => sql`DELETE FROM venue_credentials WHERE account_id = ${live.accountId} RETURNING *`),
      ([stored]) => query(instance, (sql) => sql`INSERT INTO venue_credentials ${sql.insert(stored!)}`)
    )

  /** Runs `effect` with the fake's order answers failing as `behavior`, putting them back after. */
  const withOrders = <A, E, R>(behavior: typeof fake.orders, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => (fake.orders = behavior)),
      () => effect,
      () => Effect.sync(() => (fake.orders = "ok"))
    )

  /**
   * Runs `effect` with the fake answering the first order it takes as `behavior` (it acted on the
   * order) and the next ones normally: a client that sent the order again would have it refused as
   * a duplicate, and mark rejected an order the venue filled.
   */
  const withFirstOrder = <A, E, R>(behavior: typeof fake.orders, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        fake.afterOrder = () => {
          fake.orders = behavior
          fake.afterOrder = () => (fake.orders = "ok")
        }
      }),
      () => effect,
      () =>
        Effect.sync(() => {
          fake.orders = "ok"
          fake.afterOrder = () => {}
        })
    )

  describe("over pglite", () => {
    it.scopedLive(
      "the connection drops after the order is sent, before its answer: found by its key and booked once",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          const run = yield* withFirstOrder("drop", runOnce(instance, live))
          expect(run).toMatchObject({ status: "completed", attempts: 1, error: null })
          const [order] = yield* converged(instance, live)
          expect(order).toMatchObject({ status: "filled", price: v.fillPrice })
          // The fill delivered twice (the reconciliation finds the same fill the run booked): booked once.
          yield* reconcile(instance, live)
          yield* reconcile(instance, live)
          expect(yield* converged(instance, live)).toHaveLength(1)
          expect(yield* eventsOf(instance, live)).toEqual([])
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the venue answers 5xx after accepting, or too slowly: found by its key and booked once",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* testStorages[0]!.storage, yield* Effect.scope)
          for (const behavior of ["error500", "slow"] as const) {
            const live = yield* liveAccount(instance)
            const run = yield* withFirstOrder(behavior, runOnce(instance, live))
            expect(run).toMatchObject({ status: "completed", attempts: 1 })
            const [order] = yield* converged(instance, live)
            expect(order).toMatchObject({ status: "filled", price: v.fillPrice })
            expect(live.venueAccount()!.orders.size).toBe(1)
          }
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the venue is unreachable from the moment it took the order: the order waits, and one pass books it once it is back",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          yield* runIntoOutage(instance, live)
          const [waiting] = yield* ordersOf(instance, live)
          expect(waiting).toMatchObject({ status: "submitted" })
          // The venue is back: one reconciliation pass books what it executed.
          yield* reconcile(instance, live)
          const [order] = yield* converged(instance, live)
          expect(order).toMatchObject({ id: waiting!.id, status: "filled", price: v.fillPrice })
          expect(live.venueAccount()!.orders.size).toBe(1)
          expect(yield* eventsOf(instance, live)).toEqual(["fill_booked"])
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the account's credentials are removed while an order's answer is lost: the order stays submitted and flagged, and one pass books it once they return",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          yield* runIntoOutage(instance, live)
          const restoreCredentials = yield* removeCredentials(instance, live)
          // Settled again (the run taken over, the next run, a watcher pass), twice: the venue cannot be asked.
          for (let i = 0; i < 2; i++) {
            const [waiting] = yield* ordersOf(instance, live)
            const settled = yield* on(
              instance,
              Effect.flatMap(OrderPlacement, (p) => Effect.either(p.settle(waiting!)))
            )
            expect(settled).toMatchObject({ _tag: "Left", left: { message: expect.stringMatching(/stays submitted/) } })
          }
          const [waiting] = yield* ordersOf(instance, live)
          expect(waiting).toMatchObject({ status: "submitted" })
          expect(yield* eventsOf(instance, live)).toEqual(["credentials_missing"])
          // The credentials return: one pass looks the order up and books it.
          yield* restoreCredentials
          yield* reconcile(instance, live)
          const [order] = yield* converged(instance, live)
          expect(order).toMatchObject({ id: waiting!.id, status: "filled", price: v.fillPrice })
          expect(yield* eventsOf(instance, live)).toEqual(["fill_booked", "credentials_missing"])
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "an order lost on its way to the venue: tried again under its key by the run; once given up, rejected by the pass and never sent by it",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          const run = yield* withOrders("unreachable", runOnce(instance, live))
          expect(run).toMatchObject({ status: "failed", error: expect.stringMatching(/^Gave up after/) })
          const [lost] = yield* ordersOf(instance, live)
          expect(lost).toMatchObject({ status: "submitted" })
          // Just sent, it may still be on its way: the pass leaves it to its sender.
          yield* reconcile(instance, live)
          expect((yield* ordersOf(instance, live))[0]).toMatchObject({ status: "submitted" })
          // Sent long ago and unknown to the venue: rejected, not sent again.
          yield* query(
            instance,
            (sql) =>
              sql`UPDATE automation_orders SET created_at = created_at - interval '10 minutes' WHERE id = ${lost!.id}`
          )
          const sent = fake.orderQueries.length
          yield* reconcile(instance, live)
          const [order] = yield* converged(instance, live)
          expect(order).toMatchObject({
            id: lost!.id,
            status: "rejected",
            error: expect.stringMatching(/never received/)
          })
          expect(fake.orderQueries.length).toBe(sent)
          expect(live.venueAccount()?.orders.size ?? 0).toBe(0)
          expect(yield* eventsOf(instance, live)).toEqual(["order_unknown"])
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the venue refuses for insufficient margin: rejected with its reason, nothing booked",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          fake.marginShort = true
          const run = yield* runOnce(instance, live).pipe(
            Effect.ensuring(Effect.sync(() => (fake.marginShort = false)))
          )
          expect(run).toMatchObject({ status: "completed" })
          expect(run.error).toMatch(/insufficient/i)
          const [order] = yield* converged(instance, live)
          expect(order).toMatchObject({ status: "rejected", price: null })
          yield* reconcile(instance, live)
          yield* converged(instance, live)
        }),
      { timeout: 120_000 }
    )

    it.scopedLive("a partial fill: what executed is booked, the rest expired", () =>
      Effect.gen(function*() {
        const { instance, live } = yield* liveOnPglite()
        fake.fillRatio = 0.5
        const run = yield* runOnce(instance, live).pipe(Effect.ensuring(Effect.sync(() => (fake.fillRatio = 1))))
        expect(run).toMatchObject({ status: "completed", error: null })
        const [order] = yield* converged(instance, live)
        const sent = v.sentQuantity(fake.orderBodies.length - 1)
        expect(order!.quantity).toBeCloseTo(sent / 2, 10)
      }), { timeout: 120_000 })

    it.scopedLive(
      "the stop loss rests at the venue and fires while the platform is down: the pass books the close at its price",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite({ stop_loss: 60_000, take_profit: 70_000 })
          yield* runOnce(instance, live)
          const venue = live.venueAccount()!
          // Leverage and margin mode were set before the first order; the exits rest at the venue, reduce-only.
          expect(venue.settings.get("BTC")).toEqual({ leverage: 1, cross: false })
          const triggers = Array.from(venue.orders.values()).filter((o) => o.trigger !== null)
          expect(triggers.map((o) => [o.trigger!.kind, o.trigger!.px, o.status, o.reduceOnly]).sort()).toEqual([
            ["sl", 60_000, "open", true],
            ["tp", 70_000, "open", true]
          ])
          const [position] = yield* on(
            instance,
            Effect.flatMap(Bindings, (b) => b.listPositions(live.caller, live.accountId, { limit: 10, offset: 0 }))
          )
            .pipe(Effect.map((l) => l.positions))
          expect(position).toMatchObject({ protected_at_venue: true, adopted: false })
          // The platform's watcher leaves them to the venue: the mark falls through the stop while nobody watches.
          fake.setMark("BTC", 59_000)
          yield* Effect.ensuring(
            Effect.gen(function*() {
              expect(venue.positions.has("BTC")).toBe(false)
              yield* reconcile(instance, live)
            }),
            Effect.sync(() => fake.setMark("BTC", 65_000))
          )
          const orders = yield* converged(instance, live)
          expect(orders.at(-1)).toMatchObject({ trigger: "stop_loss", status: "filled", price: 60_000, side: "sell" })
          // The take profit it no longer needs is cancelled at the venue.
          expect(triggers.find((o) => o.trigger!.kind === "tp")!.status).toBe("canceled")
          expect(yield* eventsOf(instance, live)).toEqual(["position_closed"])
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a position the ledger does not know is adopted and flagged; one the venue resized is brought to its size",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite()
          yield* runOnce(instance, live)
          const venue = live.venueAccount()!
          // Someone trades on the venue by hand: an ETH short the platform never placed, and half the BTC sold.
          venue.positions.set("ETH", { szi: -1.5, entryPx: 3_150, leverage: 3, cross: true })
          const btc = venue.positions.get("BTC")!
          venue.positions.set("BTC", { ...btc, szi: btc.szi / 2 })
          yield* reconcile(instance, live)
          yield* converged(instance, live)
          expect((yield* eventsOf(instance, live)).sort()).toEqual(["position_adopted", "position_resized"])
          const positions = (yield* on(
            instance,
            Effect.flatMap(Bindings, (b) => b.listPositions(live.caller, live.accountId, { limit: 10, offset: 0 }))
          )).positions
          expect(positions.find((p) => p.symbol === "ETH")).toMatchObject({
            side: "short",
            size: 1.5,
            entry_price: 3_150,
            adopted: true
          })
          // Nothing left to do on the next pass.
          yield* reconcile(instance, live)
          expect(yield* eventsOf(instance, live)).toHaveLength(2)
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a limit entry rests at the venue under the dead-man switch; the venue fills it while nobody watches, and the pass books and protects it",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite({ limit: 60_000, stop_loss: 55_000 })
          const run = yield* runOnce(instance, live)
          expect(run).toMatchObject({ status: "completed", error: null })
          const [entry] = yield* converged(instance, live)
          expect(entry).toMatchObject({ order_type: "limit", entry_price: 60_000, status: "open", route: "venue" })
          const venue = live.venueAccount()!
          const resting = venue.orders.get(Number(entry!.venue_order_id))!
          // Sized at its level, as the venue needs a quantity now: half the cash at 60,000.
          expect(resting).toMatchObject({ limitPx: 60_000, status: "open", reduceOnly: false })
          expect(resting.size).toBeCloseTo(entry!.quantity, 10)
          const deadMan = (instance: Instance) =>
            on(instance, Effect.flatMap(Reconciliation, (r) => r.deadMan(Duration.minutes(1))))
          yield* deadMan(instance)
          expect(venue.cancelAt).toBeGreaterThan(Date.now() + 50_000)
          fake.setMark("BTC", 59_500)
          fake.setMark("BTC", 65_000)
          expect(resting.status).toBe("filled")
          yield* reconcile(instance, live)
          const [filled] = yield* converged(instance, live)
          expect(filled).toMatchObject({ id: entry!.id, status: "filled", price: 60_000 })
          expect(yield* eventsOf(instance, live)).toEqual(["fill_booked"])
          // The filled entry's stop loss rests at the venue; nothing else does, so the switch is disarmed.
          const stops = Array.from(venue.orders.values()).filter((o) => o.trigger !== null && o.status === "open")
          expect(stops.map((o) => [o.trigger!.kind, o.trigger!.px])).toEqual([["sl", 55_000]])
          yield* deadMan(instance)
          expect(venue.cancelAt).toBeNull()
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a later decision replaces an entry resting at the venue: cancelled there first, then in the ledger",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite({ limit: 3_000 }, "ETH")
          yield* runOnce(instance, live)
          yield* runOnce(instance, live)
          const [first, second] = yield* converged(instance, live)
          expect(first).toMatchObject({ status: "cancelled", error: expect.stringMatching(/executed none of it/) })
          expect(second).toMatchObject({ status: "open", order_type: "limit" })
          const venue = live.venueAccount()!
          expect(venue.orders.get(Number(first!.venue_order_id))!.status).toBe("canceled")
          expect(venue.orders.get(Number(second!.venue_order_id))!.status).toBe("open")
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the account's credentials are removed while an entry rests at the venue: the next decision fails rather than forget it; once they return it is cancelled there first",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite({ limit: 3_000 }, "ETH")
          yield* runOnce(instance, live)
          const restoreCredentials = yield* removeCredentials(instance, live)
          const failed = yield* runOnce(instance, live)
          expect(failed).toMatchObject({ status: "failed", error: expect.stringMatching(/stays open/) })
          const [resting] = yield* ordersOf(instance, live)
          expect(resting).toMatchObject({ status: "open", route: "venue" })
          const venue = live.venueAccount()!
          expect(venue.orders.get(Number(resting!.venue_order_id))!.status).toBe("open")
          expect(yield* eventsOf(instance, live)).toEqual(["credentials_missing"])
          yield* restoreCredentials
          yield* runOnce(instance, live)
          const [first, second] = yield* converged(instance, live)
          expect(first).toMatchObject({ id: resting!.id, status: "cancelled" })
          expect(venue.orders.get(Number(first!.venue_order_id))!.status).toBe("canceled")
          expect(second).toMatchObject({ status: "open", order_type: "limit", route: "venue" })
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "the dead-man switch fires while the platform is down: the entry is cancelled in the ledger and the stop loss placed again",
      () =>
        Effect.gen(function*() {
          const { instance, live } = yield* liveOnPglite({ stop_loss: 60_000 })
          yield* runOnce(instance, live)
          const eth = yield* alsoBound(instance, live, "ETH", { limit: 3_000 })
          yield* runOnce(instance, eth)
          yield* on(instance, Effect.flatMap(Reconciliation, (r) => r.deadMan(Duration.minutes(1))))
          const venue = live.venueAccount()!
          // The server is gone past the deadline: the venue cancels every open order, the stop loss among them.
          venue.cancelAt = Date.now() - 1
          yield* reconcile(instance, live)
          const orders = yield* converged(instance, live)
          expect(orders.find((o) => o.symbol === "ETH")).toMatchObject({ status: "cancelled" })
          expect((yield* eventsOf(instance, live)).sort()).toEqual(["order_closed", "protection_replaced"])
          const open = Array.from(venue.orders.values()).filter((o) => o.status === "open")
          expect(open.map((o) => [o.coin, o.trigger?.kind, o.trigger?.px])).toEqual([["BTC", "sl", 60_000]])
          const [position] = (yield* on(
            instance,
            Effect.flatMap(Bindings, (b) => b.listPositions(live.caller, live.accountId, { limit: 10, offset: 0 }))
          )).positions
          expect(position).toMatchObject({ symbol: "BTC", protected_at_venue: true })
        }),
      { timeout: 120_000 }
    )
  })

  /** A platform instance with one run worker in a child process on the database, talking to the fake venue. */
  const workerProcess = (storage: StorageConfig) => {
    const prefix = v.exchange.toUpperCase()
    return storage.kind === "postgres"
      ? serverProcess(storage.url, {
        BACKTEST_CONCURRENCY: "0",
        SIGNAL_SAMPLER: "false",
        AUTOMATION_ENABLED: "false",
        AUTOMATION_CONCURRENCY: "1",
        AUTOMATION_POLL_INTERVAL_MS: "50",
        AUTOMATION_LEASE_MS: "2000",
        [`${prefix}_MODE`]: "http",
        [`${prefix}_BASE_URL`]: fake.url,
        [`${prefix}_TIMEOUT_MS`]: "600000"
      }, "SIGKILL")
      : Effect.die(new Error("expected PostgreSQL"))
  }

  describe.skipIf(testDatabaseUrl === undefined)("across a killed process, over postgres", () => {
    it.scopedLive(
      "the process is killed mid-fill (the venue filled part of it) and restarted: the order is found by its key and booked once",
      () =>
        Effect.gen(function*() {
          const storage = yield* testStorages[1]!.storage
          // This instance only queues runs and reads; starting first, it also creates the schema.
          const submitter = yield* startInstance(storage, yield* Effect.scope, 0)
          const live = yield* liveAccount(submitter)
          const workerScope = yield* Scope.make()
          const worker = yield* Scope.extend(workerProcess(storage), workerScope)
          const sent = fake.orderQueries.length
          fake.fillRatio = 0.5
          fake.orders = "hang"
          // The venue takes the order (filling half of it) and keeps its answer; the process dies waiting for it.
          const killed = on(
            submitter,
            Effect.flatMap(Bindings, (b) => b.runNow(live.caller, live.programId, live.bindingId))
          )
          yield* killed
          while (fake.orderQueries.length === sent) yield* realPause
          worker.kill("SIGKILL")
          yield* Scope.close(workerScope, { _tag: "Success", value: undefined } as never)
          fake.orders = "ok"
          fake.fillRatio = 1
          const [waiting] = yield* ordersOf(submitter, live)
          expect(waiting).toMatchObject({ status: "submitted" })
          // Restarted: a worker takes the run over once its lease is out, and looks the order up before sending anything.
          yield* on(
            submitter,
            Layer.buildWithScope(
              AutomationRunsLive.pipe(
                Layer.provide(
                  PlatformConfig.layer(testOptions(storage, { automation: automation(1), ...venueOptions(1_000) }))
                )
              ),
              yield* Effect.scope
            )
          )
          const deadline = Date.now() + 60_000
          while ((yield* ordersOf(submitter, live))[0]!.status === "submitted" && Date.now() < deadline) {
            yield* realPause
          }
          const [order] = yield* converged(submitter, live)
          const quantity = v.sentQuantity(sent)
          expect(order).toMatchObject({ id: waiting!.id, status: "filled", price: v.fillPrice })
          expect(order!.quantity).toBeCloseTo(quantity / 2, 10)
          expect(fake.orderQueries.length).toBe(sent + 1)
        }),
      { timeout: 180_000 }
    )
  })
})
