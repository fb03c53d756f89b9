import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  type BacktestJobOptions,
  Backtests,
  defaultSandboxLimits,
  PlatformConfig,
  PlatformLive,
  type PlatformOptions,
  Programs,
  type StorageConfig
} from "@trading-platform/core"
import { type Context, Duration, Effect, Layer, Redacted, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { backtestThreadCounts } from "../../src/backtests/BacktestThread.js"
import { newCaller } from "../support/Callers.js"
import { serverProcess } from "../support/ServerProcess.js"
import { testDatabaseUrl, testOptions, testStorages } from "../support/TestStorage.js"

const tradingProgram = `let n = 0
export function decide(data) {
  n++
  if (n % 10 !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: 0.5 }
}
`
/** Busy for a while at every bar, so a long run stays running for the whole test. */
const slowProgram = `export function decide(data) {
  let x = 0
  for (let i = 0; i < 3000; i++) x += i % 7
  return { operation: x > 0 ? "hold" : "buy" }
}
`
/** A few milliseconds of work at every bar. */
const verySlowProgram = slowProgram.replace("3000", "60000")
const shortRun = {
  symbol: "BTC",
  exchange: "venue1",
  timeframe: "1h",
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-15T00:00:00Z",
  initial_balance: 10_000,
  fee_rate: 0.00035,
  slippage: 0.0005,
  leverage: 1
} as const

/** One platform instance (its own services and backtest workers) on the storage, until the scope closes. */
const startInstance = (
  storage: StorageConfig,
  scope: Scope.Scope,
  backtests: Partial<BacktestJobOptions> = {},
  overrides: Partial<PlatformOptions> = {}
) =>
  Layer.buildWithScope(
    PlatformLive.pipe(
      Layer.provideMerge(
        PlatformConfig.layer(
          testOptions(storage, {
            backtests: {
              concurrency: 1,
              pollInterval: Duration.millis(20),
              lease: Duration.seconds(30),
              maxAttempts: 3,
              ...backtests
            },
            ...overrides
          })
        )
      )
    ),
    scope
  )

type Instance = Effect.Effect.Success<ReturnType<typeof startInstance>>
const on = <A, E>(instance: Instance, effect: Effect.Effect<A, E, any>) =>
  Effect.provide(effect, instance as Context.Context<any>)

/** A new user with one program; answers the caller and the program id. */
const userWithProgram = (instance: Instance, code = tradingProgram) =>
  on(
    instance,
    Effect.gen(function*() {
      const caller = yield* newCaller("jobs")
      const program = yield* Programs.pipe(
        Effect.flatMap((programs) => programs.create(caller, { name: "Every tenth bar", code }))
      )
      return { caller, programId: program.id }
    })
  )

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Polls until every backtest has finished; dies at the deadline. */
const waitUntilFinished = (instance: Instance, caller: any, ids: ReadonlyArray<number>, deadlineMs = 90_000) =>
  on(
    instance,
    Effect.gen(function*() {
      const backtests = yield* Backtests
      const deadline = Date.now() + deadlineMs
      for (;;) {
        const all = yield* Effect.forEach(ids, (id) => backtests.get(caller, id as any))
        if (all.every((b) => ["completed", "failed", "cancelled"].includes(b.status))) return all
        if (Date.now() > deadline) {
          return yield* Effect.die(new Error(`still running: ${all.map((b) => b.status).join(",")}`))
        }
        yield* realPause
      }
    })
  )

const withScope = <A, E>(f: (scope: Scope.Scope) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(Scope.make(), f, (scope, exit) => Scope.close(scope, exit))

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`backtest jobs over ${storage.name}`, () => {
    /** A storage two instances can open one after the other: a data directory for PGlite, a fresh database for PostgreSQL. */
    const durableStorage = storage.name === "pglite"
      ? Effect.acquireRelease(
        Effect.sync((): StorageConfig => ({ kind: "pglite", dataDir: mkdtempSync(join(tmpdir(), "tp-jobs-")) })),
        (s) => Effect.sync(() => s.kind === "pglite" && rmSync(s.dataDir, { recursive: true, force: true }))
      )
      : storage.storage

    it.scopedLive(
      "after a restart, a job left running under an expired lease runs again; one out of attempts fails with the reason",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          // The first instance queues two jobs and "dies" mid-run: the rows say running, the leases have expired.
          const { caller, resumed, exhausted } = yield* withScope((scope) =>
            Effect.gen(function*() {
              const first = yield* startInstance(storageConfig, scope, { concurrency: 0 })
              const { caller, programId } = yield* userWithProgram(first)
              return yield* on(
                first,
                Effect.gen(function*() {
                  const backtests = yield* Backtests
                  const sql = yield* SqlClient.SqlClient
                  const resumed = yield* backtests.submit(caller, programId, shortRun)
                  const exhausted = yield* backtests.submit(caller, programId, shortRun)
                  const past = new Date(Date.now() - 60_000)
                  yield* sql`UPDATE backtests SET status = 'running', attempts = 1, lease_until = ${past}, claimed_by = 'dead', progress = 0.5 WHERE id = ${resumed.id}`
                  yield* sql`UPDATE backtests SET status = 'running', attempts = 3, lease_until = ${past}, claimed_by = 'dead', error = 'venue down' WHERE id = ${exhausted.id}`
                  return { caller, resumed: resumed.id, exhausted: exhausted.id }
                })
              )
            })
          )
          const second = yield* startInstance(storageConfig, yield* Effect.scope, { concurrency: 2 })
          const [done, failed] = yield* waitUntilFinished(second, caller, [resumed, exhausted])
          expect(done).toMatchObject({ status: "completed", attempts: 2, progress: 1 })
          expect(done!.metrics!.total_trades).toBeGreaterThan(0)
          expect(failed).toMatchObject({ status: "failed", attempts: 4, metrics: null })
          expect(failed!.error).toBe("Gave up after 3 attempts: venue down")
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a run whose venue fails is handed back and tried again, then fails with the venue's reason",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          // Queued where the simulated venue answers; run where venue1 is an HTTP API nobody serves.
          const { caller, id } = yield* withScope((scope) =>
            Effect.gen(function*() {
              const first = yield* startInstance(storageConfig, scope, { concurrency: 0 })
              const { caller, programId } = yield* userWithProgram(first)
              const queued = yield* on(
                first,
                Effect.flatMap(Backtests, (backtests) => backtests.submit(caller, programId, shortRun))
              )
              return { caller, id: queued.id }
            })
          )
          const defaults = testOptions(storageConfig)
          const unreachable = {
            mode: "http",
            baseUrl: "http://127.0.0.1:9",
            timeout: Duration.seconds(2),
            retries: 0
          } as const
          const second = yield* startInstance(storageConfig, yield* Effect.scope, { maxAttempts: 2 }, {
            venues: { ...defaults.venues, venue1: unreachable }
          })
          const [failed] = yield* waitUntilFinished(second, caller, [id])
          expect(failed).toMatchObject({ status: "failed", attempts: 3, metrics: null })
          expect(failed!.error).toMatch(/^Gave up after 2 attempts: \S/)
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a run stopped by the sandbox's wall-clock safety net is not the program's verdict: it is tried again, then gives up saying why",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          // Saved under the default net: saving loads the program, which a 50 ms net may stop on a busy machine.
          const { caller, programId } = yield* withScope((scope) =>
            Effect.flatMap(
              startInstance(storageConfig, scope, { concurrency: 0 }),
              (saving) =>
                userWithProgram(
                  saving,
                  `let n = 0\nexport function decide() { if (++n === 50) for (;;) {}\n return { operation: "hold" } }`
                )
            )
          )
          // A budget no program spends and a 50 ms safety net: as if the machine were far too slow.
          const instance = yield* startInstance(storageConfig, yield* Effect.scope, { maxAttempts: 2 }, {
            sandbox: { ...defaultSandboxLimits, cpuChecksPerCall: 1e12, wallMillisPerCall: 50 }
          })
          const job = yield* on(
            instance,
            Effect.flatMap(Backtests, (backtests) => backtests.submit(caller, programId, shortRun))
          )
          const [failed] = yield* waitUntilFinished(instance, caller, [job.id])
          expect(failed).toMatchObject({ status: "failed", attempts: 3, metrics: null })
          // The net stops the call in the thread, or, if the thread is slow to notice, its watchdog does.
          expect(failed!.error).toMatch(/^Gave up after 2 attempts: .*wall-clock safety net/)
          expect(failed!.error).not.toMatch(/cpu_budget_exceeded/)
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a slow run renews its lease while its thread steps a window, so no other worker takes it over",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          // Two workers and a 1 s lease: a window of 1000 slow bars takes longer than the lease.
          const instance = yield* startInstance(storageConfig, yield* Effect.scope, {
            concurrency: 2,
            lease: Duration.seconds(1)
          })
          const { caller, programId } = yield* userWithProgram(instance, verySlowProgram)
          const job = yield* on(
            instance,
            Effect.flatMap(Backtests, (backtests) =>
              backtests.submit(caller, programId, {
                ...shortRun,
                start: "2024-09-01T00:00:00Z",
                end: "2025-01-01T00:00:00Z"
              }))
          )
          const [done] = yield* waitUntilFinished(instance, caller, [job.id])
          expect(done).toMatchObject({ error: null, status: "completed", attempts: 1, progress: 1 })
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "cancelling a running job stops its worker and terminates its thread, and progress moves while it runs",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          const instance = yield* startInstance(storageConfig, yield* Effect.scope, { concurrency: 1 })
          const { caller, programId } = yield* userWithProgram(instance, slowProgram)
          yield* on(
            instance,
            Effect.gen(function*() {
              const backtests = yield* Backtests
              // 484k busy daily bars: minutes of work, on the instance's only worker.
              const long = yield* backtests.submit(caller, programId, {
                ...shortRun,
                timeframe: "1d",
                start: "0700-01-01T00:00:00Z",
                end: "2025-01-01T00:00:00Z"
              })
              const deadline = Date.now() + 60_000
              for (;;) {
                const current = yield* backtests.get(caller, long.id)
                if (current.status === "running" && current.progress > 0) break
                if (Date.now() > deadline) {
                  return yield* Effect.die(
                    new Error(
                      `the long job never made progress: ${
                        JSON.stringify({ ...current, equity_curve: [], trades: [] })
                      }`
                    )
                  )
                }
                yield* realPause
              }
              expect(backtestThreadCounts()).toMatchObject({ live: 1, busy: 1 })
              const cancelled = yield* backtests.cancel(caller, long.id)
              expect(cancelled.status).toBe("cancelled")
              while (backtestThreadCounts().live > 0) {
                if (Date.now() > deadline) {
                  return yield* Effect.die(new Error("the cancelled job's thread is still alive"))
                }
                yield* realPause
              }
              // The only worker takes the next job only once it has let go of the cancelled one.
              const next = yield* backtests.submit(caller, programId, shortRun)
              const [after, done] = yield* waitUntilFinished(instance, caller, [long.id, next.id], 30_000)
              expect(done!.status).toBe("completed")
              expect(after).toMatchObject({ status: "cancelled", metrics: null, progress: cancelled.progress })
              expect(after!.progress).toBeLessThan(1)
            })
          )
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "jobs run one after another in one warm thread, after a failed run too; a cancelled run's thread is ended, and the instance's end ends the rest",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage
          const before = backtestThreadCounts()
          /** Threads started since the test began, threads alive, threads running a backtest. */
          const counts = () => {
            const now = backtestThreadCounts()
            return [now.started - before.started, now.live - before.live, now.busy] as const
          }
          yield* withScope((scope) =>
            Effect.gen(function*() {
              const instance = yield* startInstance(storageConfig, scope, { concurrency: 1 })
              const trading = yield* userWithProgram(instance)
              const failing = yield* userWithProgram(
                instance,
                `let n = 0\nexport function decide() { if (++n > 5) throw new Error("boom"); return { operation: "hold" } }`
              )
              const slow = yield* userWithProgram(instance, slowProgram)
              const runOne = (user: typeof trading) =>
                Effect.flatMap(
                  on(
                    instance,
                    Effect.flatMap(Backtests, (backtests) => backtests.submit(user.caller, user.programId, shortRun))
                  ),
                  (job) => Effect.map(waitUntilFinished(instance, user.caller, [job.id]), ([done]) => done!)
                )
              const first = yield* runOne(trading)
              expect(first).toMatchObject({ status: "completed", error: null })
              expect(counts()).toEqual([1, 1, 0])
              expect((yield* runOne(failing)).error).toMatch(/boom/)
              // Nothing of the runs before carries over into the next.
              const again = yield* runOne(trading)
              expect([again.status, again.metrics, again.trades]).toEqual(["completed", first.metrics, first.trades])
              expect(counts()).toEqual([1, 1, 0])
              // A cancelled run's thread is in the middle of a window: ended, not reused.
              yield* on(
                instance,
                Effect.gen(function*() {
                  const backtests = yield* Backtests
                  const long = yield* backtests.submit(slow.caller, slow.programId, {
                    ...shortRun,
                    timeframe: "1d",
                    start: "0700-01-01T00:00:00Z",
                    end: "2025-01-01T00:00:00Z"
                  })
                  const deadline = Date.now() + 60_000
                  while ((yield* backtests.get(slow.caller, long.id)).progress === 0) {
                    if (Date.now() > deadline) return yield* Effect.die(new Error("the long job never made progress"))
                    yield* realPause
                  }
                  yield* backtests.cancel(slow.caller, long.id)
                  // Soon, not when an idle thread would end (a minute).
                  const ended = Date.now() + 20_000
                  while (counts()[1] > 0) {
                    if (Date.now() > ended) {
                      return yield* Effect.die(new Error("the cancelled job's thread is still alive"))
                    }
                    yield* realPause
                  }
                })
              )
              expect(counts()).toEqual([1, 0, 0])
              expect(yield* runOne(trading)).toMatchObject({ status: "completed", error: null })
              expect(counts()).toEqual([2, 1, 0])
            })
          )
          // The instance's end waits for its threads to exit.
          expect(counts()).toEqual([2, 0, 0])
        }),
      { timeout: 120_000 }
    )
  })
}

/** A platform instance with `concurrency` backtest workers in a child process, until the scope closes. */
const workerProcess = (url: Redacted.Redacted, concurrency: number) =>
  serverProcess(url, { BACKTEST_CONCURRENCY: String(concurrency), BACKTEST_POLL_INTERVAL_MS: "50" })

describe.skipIf(testDatabaseUrl === undefined)("backtest jobs across processes over postgres", () => {
  it.scopedLive(
    "two server processes on one database run each of many jobs exactly once",
    () =>
      Effect.gen(function*() {
        const storageConfig = yield* testStorages[1]!.storage
        if (storageConfig.kind !== "postgres") return yield* Effect.die(new Error("expected PostgreSQL"))
        // This instance only submits; starting first, it also creates the schema.
        const submitter = yield* startInstance(storageConfig, yield* Effect.scope, { concurrency: 0 })
        const children = yield* Effect.all([workerProcess(storageConfig.url, 3), workerProcess(storageConfig.url, 3)], {
          concurrency: "unbounded"
        })
        const { caller, programId } = yield* userWithProgram(submitter)
        const ids = yield* on(
          submitter,
          Effect.flatMap(Backtests, (backtests) =>
            Effect.forEach(
              Array.from({ length: 30 }, (_, i) => i),
              (i) =>
                Effect.map(
                  backtests.submit(caller, programId, { ...shortRun, symbol: i % 2 === 0 ? "BTC" : "ETH" }),
                  (x) => x.id
                )
            ))
        )
        const all = yield* waitUntilFinished(submitter, caller, ids, 150_000)
        expect(all.map((x) => x.status)).toEqual(ids.map(() => "completed"))
        // Each claim adds an attempt: one attempt each means no job was handed to two workers.
        expect(all.map((x) => x.attempts)).toEqual(ids.map(() => 1))
        const workers = yield* on(
          submitter,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ claimed_by: string }>`SELECT DISTINCT claimed_by FROM backtests`)
        )
        // claimed_by is host:pid:worker, so both processes took jobs.
        const pids = new Set(workers.map((w) =>
          Number(w.claimed_by.split(":")[1])
        ))
        expect([...pids].sort()).toEqual(children.map((child) => child.pid).sort())
      }),
    { timeout: 180_000 }
  )
})
