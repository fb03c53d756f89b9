import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  AutomationRunsLive,
  type BindingId,
  Bindings,
  LedgerRepo,
  PlatformConfig,
  PlatformLive,
  type PlatformOptions,
  type ProgramId,
  Programs,
  RunsRepo,
  type StorageConfig
} from "@trading-platform/core"
import { type Context, Duration, Effect, Layer, Option, Redacted, Scope } from "effect"
import { newCaller } from "../support/Callers.js"
import { serverProcess } from "../support/ServerProcess.js"
import { testDatabaseUrl, testOptions, testStorages } from "../support/TestStorage.js"

/** Buys half the free cash when flat, holds otherwise. */
const program = `export function decide(data) {
  return data.position ? { operation: "hold" } : { operation: "buy", target_portion_of_balance: 0.5 }
}
`

const automation = (concurrency: number): PlatformOptions["automation"] => ({
  enabled: false,
  concurrency,
  pollInterval: Duration.millis(20),
  lease: Duration.seconds(30),
  maxAttempts: 3,
  pnlRefreshInterval: Duration.minutes(1)
})

/** One platform instance on the storage, until the scope closes. */
const startInstance = (storage: StorageConfig, scope: Scope.Scope, overrides: Partial<PlatformOptions> = {}) =>
  Layer.buildWithScope(
    PlatformLive.pipe(
      Layer.provideMerge(PlatformConfig.layer(testOptions(storage, { automation: automation(0), ...overrides })))
    ),
    scope
  )

type Instance = Effect.Effect.Success<ReturnType<typeof startInstance>>
const on = <A, E>(instance: Instance, effect: Effect.Effect<A, E, any>) =>
  Effect.provide(effect, instance as Context.Context<any>)

/** A new user with a program and `accounts` accounts, each bound to the program for BTC and ETH. */
const userWithBindings = (instance: Instance, accounts: number) =>
  on(
    instance,
    Effect.gen(function*() {
      const caller = yield* newCaller("auto")
      const programId = (yield* Effect.flatMap(Programs, (p) =>
        p.create(caller, { name: "Buy once", code: program }))).id
      const bindings = yield* Effect.forEach(Array.from({ length: accounts }), (_, i) =>
        Effect.gen(function*() {
          const account = yield* Effect.flatMap(Accounts, (a) => a.create(caller, { name: `acct ${i}` }))
          const binding = yield* Effect.flatMap(Bindings, (b) =>
            b.create(caller, programId, {
              account_id: account.id,
              symbols: ["BTC", "ETH"],
              timeframe: "1h",
              interval_minutes: 1440,
              signal_pool_ids: [],
              params: {},
              enabled: true
            }))
          return { accountId: account.id, bindingId: binding.id }
        }))
      return { caller, programId, bindings }
    })
  )

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Polls until every run of the bindings has finished; dies at the deadline. */
const waitForRuns = (
  instance: Instance,
  caller: any,
  programId: ProgramId,
  bindings: ReadonlyArray<BindingId>,
  count: number,
  deadlineMs = 120_000
) =>
  on(
    instance,
    Effect.gen(function*() {
      const service = yield* Bindings
      const deadline = Date.now() + deadlineMs
      for (;;) {
        const runs = (yield* Effect.forEach(bindings, (id) =>
          service.listRuns(caller, programId, id, { limit: 500, offset: 0 }))).flatMap((l) =>
            l.runs
          )
        if (runs.length >= count && runs.every((r) => r.status === "completed" || r.status === "failed")) return runs
        if (Date.now() > deadline) {
          return yield* Effect.die(
            new Error(`runs at the deadline: ${runs.map((r) => r.status).join(",")}`)
          )
        }
        yield* realPause
      }
    })
  )

describe("automation runs after a crash", () => {
  it.scopedLive(
    "a run taken over between its decision and its fill fills once, with the decision it had",
    () =>
      Effect.gen(function*() {
        const storage = yield* testStorages[0]!.storage
        const instance = yield* startInstance(storage, yield* Effect.scope)
        const { bindings, caller, programId } = yield* userWithBindings(instance, 1)
        const [{ accountId, bindingId }] = bindings as [typeof bindings[0]]
        // The first worker claims the run, decides, records its order and dies before filling it.
        const crashed = yield* on(
          instance,
          Effect.gen(function*() {
            const runs = yield* RunsRepo
            const ledger = yield* LedgerRepo
            const [queued] = (yield* Effect.flatMap(Bindings, (b) => b.runNow(caller, programId, bindingId))).runs
              .filter((r) => r.symbol === "BTC")
            const now = new Date()
            // Only BTC is taken in this test: the ETH run of the same binding waits behind it.
            const claimed = Option.getOrUndefined(
              yield* runs.queue.claim({ now, leaseUntil: new Date(now.getTime() - 1), worker: "dead-worker" })
            )
            expect(claimed?.id).toBe(queued!.id)
            yield* runs.decided({ id: claimed!.id, attempts: 1, symbols: claimed!.symbols }, [{
              operation: "buy",
              reason: "decided before the crash"
            }])
            return yield* ledger.insertOrder({
              run_id: claimed!.id,
              binding_id: bindingId,
              program_id: programId,
              user_id: caller.id,
              account_id: accountId,
              symbol: "BTC",
              exchange: "venue2",
              route: "paper",
              idempotency_key: `run:crashed:${claimed!.id}`,
              side: "buy",
              quantity: 0.01,
              leverage: 1,
              status: "pending",
              take_profit_price: null,
              stop_loss_price: null,
              trailing_stop: null,
              order_type: "market",
              entry_price: null,
              time_in_force: null,
              error: null,
              created_at: now
            })
          })
        )
        // A worker starts (the dead one's lease has expired) and takes the runs over.
        yield* on(
          instance,
          Layer.buildWithScope(
            AutomationRunsLive.pipe(
              Layer.provide(PlatformConfig.layer(testOptions(storage, { automation: automation(1) })))
            ),
            yield* Effect.scope
          )
        )
        const runs = yield* waitForRuns(instance, caller, programId, [bindingId], 2)
        const btc = runs.find((r) => r.symbol === "BTC")!
        expect(btc).toMatchObject({
          status: "completed",
          attempts: 2,
          decision: { operation: "buy", reason: "decided before the crash" }
        })
        yield* on(
          instance,
          Effect.gen(function*() {
            const ledger = yield* LedgerRepo
            const orders = yield* ledger.orders({ account_id: accountId, limit: 10, offset: 0 })
            const btcOrders = orders.filter((o) => o.symbol === "BTC")
            expect(btcOrders).toHaveLength(1)
            expect(btcOrders[0]).toMatchObject({ id: crashed.id, status: "filled", quantity: 0.01 })
            const position = Option.getOrThrow(yield* ledger.position({ account_id: accountId, symbol: "BTC" }))
            expect(position.size).toBe(0.01)
            // Filling the same order again changes nothing.
            const account = yield* Effect.flatMap(Accounts, (a) => a.get(caller, accountId))
            expect(yield* ledger.fill(btcOrders[0]!, { price: 1, fee: () => 0, venue_order_id: null, at: new Date() }))
              .toBe(
                false
              )
            const again = yield* Effect.flatMap(Accounts, (a) => a.get(caller, accountId))
            expect({ cash: again.current_cash, frozen: again.frozen_cash }).toEqual({
              cash: account.current_cash,
              frozen: account.frozen_cash
            })
            // Money is exact to 10⁻⁸: the margin is the notional rounded to it.
            expect(position.margin).toBeCloseTo(0.01 * btcOrders[0]!.price!, 7)
          })
        )
      }),
    { timeout: 120_000 }
  )
})

/** A platform instance with `concurrency` automation run workers in a child process, until the scope closes. */
const workerProcess = (url: Redacted.Redacted, concurrency: number) =>
  serverProcess(url, {
    BACKTEST_CONCURRENCY: "0",
    SIGNAL_SAMPLER: "false",
    AUTOMATION_CONCURRENCY: String(concurrency),
    AUTOMATION_POLL_INTERVAL_MS: "50"
  })

describe.skipIf(testDatabaseUrl === undefined)("automation runs across processes over postgres", () => {
  it.scopedLive(
    "two server processes on one database run each run exactly once, one per binding at a time",
    () =>
      Effect.gen(function*() {
        const storage = yield* testStorages[1]!.storage
        if (storage.kind !== "postgres") return yield* Effect.die(new Error("expected PostgreSQL"))
        // This instance only queues runs; starting first, it also creates the schema.
        const submitter = yield* startInstance(storage, yield* Effect.scope)
        const children = yield* Effect.all([workerProcess(storage.url, 3), workerProcess(storage.url, 3)], {
          concurrency: "unbounded"
        })
        const { bindings, caller, programId } = yield* userWithBindings(submitter, 4)
        // Three rounds of both symbols for each binding: 24 runs.
        for (let round = 0; round < 3; round++) {
          yield* on(
            submitter,
            Effect.forEach(
              bindings,
              ({ bindingId }) => Effect.flatMap(Bindings, (b) => b.runNow(caller, programId, bindingId))
            )
          )
        }
        const runs = yield* waitForRuns(submitter, caller, programId, bindings.map((b) => b.bindingId), 24, 150_000)
        expect(runs.map((r) => r.status)).toEqual(runs.map(() => "completed"))
        // Each claim adds an attempt: one each means no run was handed to two workers.
        expect(runs.map((r) => r.attempts)).toEqual(runs.map(() => 1))
        yield* on(
          submitter,
          Effect.gen(function*() {
            const ledger = yield* LedgerRepo
            for (const { accountId } of bindings) {
              // A binding's runs went one at a time, so each symbol was bought once and then held.
              const orders = yield* ledger.orders({ account_id: accountId, limit: 50, offset: 0 })
              expect(orders.map((o) => [o.symbol, o.status]).sort()).toEqual([["BTC", "filled"], ["ETH", "filled"]])
            }
            const sql = yield* SqlClient.SqlClient
            const workers = yield* sql<{ claimed_by: string }>`SELECT DISTINCT claimed_by FROM automation_runs`
            const pids = new Set(workers.map((w) => Number(w.claimed_by.split(":")[1])))
            expect([...pids].sort()).toEqual(children.map((child) => child.pid).sort())
          })
        )
      }),
    { timeout: 180_000 }
  )
})
