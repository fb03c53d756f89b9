import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Optimizations, Programs, type StorageConfig } from "@trading-platform/core"
import { Deferred, Effect, Exit, Option, Stream } from "effect"
import { Datasets } from "../../src/market/Datasets.js"
import type { ProgramId } from "../../src/programs/Program.js"
import type { OptimizationId } from "../../src/research/Optimization.js"
import { OptimizationsRepo } from "../../src/research/OptimizationsRepo.js"
import { gridPoint } from "../../src/research/Search.js"
import { trialsRanOut } from "../../src/research/TrialWorkers.js"
import { Notifications } from "../../src/sql/Notifications.js"
import type { CurrentUserShape } from "../../src/users/Authentication.js"
import { newCaller } from "../support/Callers.js"
import { durableStorage, type Instance, on, startInstance, withScope } from "../support/Instances.js"
import { testStorages } from "../support/TestStorage.js"

const sma = `export const parameters = {
  fast: { kind: "int", min: 2, max: 30, default: 5 },
  slow: { kind: "int", min: 10, max: 100, default: 20 }
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
export function decide(data) {
  const closes = data.candles.map((c) => c.close)
  const { fast, slow } = data.params
  if (closes.length < slow) return { operation: "hold" }
  const up = mean(closes.slice(-fast)) > mean(closes.slice(-slow))
  if (up && !data.position) return { operation: "buy", target_portion_of_balance: 0.5 }
  if (!up && data.position) return { operation: "close" }
  return { operation: "hold" }
}
`

const request = {
  symbol: "BTC",
  timeframe: "1h",
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-15T00:00:00Z",
  search: "grid",
  space: { fast: { min: 3, max: 9, step: 3 }, slow: { min: 20, max: 40, step: 10 } },
  objective: "total_return"
} as const

/** What a finished trial stores, with a marker objective no real run of two weeks reaches. */
const marker = (objective: number) =>
  JSON.stringify({
    outcome: {
      metrics: {
        total_pnl: 0,
        total_pnl_percent: objective,
        total_trades: 1,
        win_rate: 0,
        max_drawdown_percent: 0,
        sharpe: 0,
        profit_factor: null
      },
      final_balance: 10_000,
      equity_curve: [],
      trades: []
    },
    objective,
    rejected: null
  })

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

const finished = (instance: Instance, caller: CurrentUserShape, programId: number, id: OptimizationId) =>
  on(
    instance,
    Effect.gen(function*() {
      const optimizations = yield* Optimizations
      const deadline = Date.now() + 90_000
      for (;;) {
        const o = yield* optimizations.get(caller, programId as any, id)
        if (["completed", "failed", "cancelled"].includes(o.status)) return o
        if (Date.now() > deadline) return yield* Effect.die(new Error(`still ${o.status}`))
        yield* realPause
      }
    })
  )

/**
 * What a second instance finds: an instance without workers creates the caller (`name`) and the
 * program, runs `queue` (which queues the search and sets up its rows), and stops.
 */
const queuedWithoutWorkers = <E>(
  storage: StorageConfig,
  name: string,
  queue: (caller: CurrentUserShape, programId: ProgramId) => Effect.Effect<OptimizationId, E, any>
) =>
  withScope((scope) =>
    Effect.gen(function*() {
      const first = yield* startInstance(storage, scope, { concurrency: 0 })
      return yield* on(
        first,
        Effect.gen(function*() {
          const caller = yield* newCaller(name)
          const program = yield* Effect.flatMap(Programs, (p) => p.create(caller, { name: "sma", code: sma }))
          return { caller, id: yield* queue(caller, program.id), programId: program.id }
        })
      )
    })
  )

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`optimisation jobs over ${storage.name}`, () => {
    it.scopedLive(
      "a coordinator that died mid-search is taken over: the trials it finished are kept, the one running and the rest run once",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage(storage, "tp-opt-jobs-")
          // The first instance (no workers) queues the search; its "dead" coordinator had planned five
          // trials, finished four (one of them with a marker objective) and was running the fifth.
          const { caller, id, programId } = yield* queuedWithoutWorkers(storageConfig, "optjobs", (caller, programId) =>
            Effect.gen(function*() {
              const queued = yield* Effect.flatMap(
                Optimizations,
                (o) =>
                  o.submit(caller, programId, request as any)
              )
              const sql = yield* SqlClient.SqlClient
              const past = new Date(Date.now() - 60_000)
              yield* sql`UPDATE optimizations SET status = 'running', attempts = 1, lease_until = ${past},
                    claimed_by = 'dead', started_at = ${new Date()} WHERE id = ${queued.id}`
              const space = [
                { name: "fast", kind: "int", min: 3, max: 9, step: 3 },
                { name: "slow", kind: "int", min: 20, max: 40, step: 10 }
              ] as const
              for (let trial = 0; trial < 5; trial++) {
                const done = trial < 4
                const result = done ? marker(trial === 2 ? 999 : -999) : null
                const metrics = result && JSON.stringify(JSON.parse(result).outcome.metrics)
                yield* sql`INSERT INTO optimization_trials (user_id, optimization_id, trial, fold, role, params,
                      start_at, end_at, status, attempts, lease_until, claimed_by, result, metrics, objective, total_return,
                      sharpe, max_drawdown_percent, total_trades, win_rate, created_at, finished_at)
                      VALUES (${caller.id}, ${queued.id}, ${trial}, 0, 'search',
                      ${JSON.stringify(gridPoint(space, trial))}, ${new Date(request.start)}, ${new Date(request.end)},
                      ${done ? "completed" : "running"}, 1, ${done ? null : past}, 'dead',
                      ${result}, ${metrics}, ${done ? (trial === 2 ? 999 : -999) : null},
                      ${done ? (trial === 2 ? 999 : -999) : null}, ${done ? 0 : null}, ${done ? 0 : null},
                      ${done ? 1 : null}, ${done ? 0 : null}, ${new Date()}, ${done ? new Date() : null})`
              }
              // Read from the rows before the takeover: four done, the marker trial the best so far.
              const optimizations = yield* Optimizations
              const before = yield* optimizations.get(caller, programId, queued.id)
              expect(before).toMatchObject({
                status: "running",
                trials_done: 4,
                trials_total: 10,
                best: { trial: 2, objective: 999, params: { fast: 3, slow: 40 } }
              })
              expect(before.best!.metrics.total_pnl_percent).toBe(999)
              const listed = yield* optimizations.list(caller, programId, { limit: 10, offset: 0 })
              expect(listed.optimizations).toEqual([before])
              return queued.id
            }))
          const second = yield* startInstance(storageConfig, yield* Effect.scope, { concurrency: 2 })
          const done = yield* finished(second, caller, programId, id)
          expect(done).toMatchObject({ status: "completed", attempts: 2, trials_done: 10, trials_total: 10 })
          // The marker trial the dead coordinator finished is the best: it was kept, not run again.
          expect(done.result!.best).toMatchObject({ trial: 2, objective: 999, params: { fast: 3, slow: 40 } })
          const sql = yield* on(second, SqlClient.SqlClient)
          const rows = yield* on(
            second,
            sql<
              {
                trial: number
                role: string
                status: string
                attempts: number
                claimed_by: string
                result: string
                metrics: string | null
              }
            >`
              SELECT trial, role, status, attempts, claimed_by, result, metrics FROM optimization_trials
              WHERE optimization_id = ${id} ORDER BY role DESC, trial`
          )
          expect(rows.map((r) => [r.role, r.trial, r.status, r.attempts, r.claimed_by === "dead"])).toEqual([
            ["search", 0, "completed", 1, true],
            ["search", 1, "completed", 1, true],
            ["search", 2, "completed", 1, true],
            ["search", 3, "completed", 1, true],
            ["search", 4, "completed", 2, false],
            ["search", 5, "completed", 1, false],
            ["search", 6, "completed", 1, false],
            ["search", 7, "completed", 1, false],
            ["search", 8, "completed", 1, false],
            ["best", 0, "completed", 1, false]
          ])
          // Each trial's metrics are written beside its result, for a best-so-far read without the result.
          for (const row of rows) {
            expect(JSON.parse(row.metrics ?? "null")).toEqual(JSON.parse(row.result).outcome.metrics)
          }
        }),
      { timeout: 150_000 }
    )

    it.scopedLive(
      "a search's coordinator is woken when the trial workers run out of trials, not at every trial's end",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 1 })
          const { done, wakes } = yield* on(
            instance,
            Effect.gen(function*() {
              // Every wake-up of the coordinators, counted from before the search is queued.
              let wakes = 0
              const listening = yield* Deferred.make<void>()
              yield* (yield* Notifications).listen("job_wakeup").pipe(
                Stream.runForEach((payload) =>
                  payload === "ping:wakes-test"
                    ? Deferred.succeed(listening, undefined)
                    : Effect.sync(() => {
                      if (payload === trialsRanOut) wakes++
                    })
                ),
                Effect.forkScoped
              )
              const sql = yield* SqlClient.SqlClient
              yield* Effect.raceFirst(
                Deferred.await(listening),
                Effect.forever(Effect.zipRight(sql`SELECT pg_notify('job_wakeup', 'ping:wakes-test')`, realPause))
              )
              const caller = yield* newCaller("optwakes")
              const program = yield* Effect.flatMap(Programs, (p) => p.create(caller, { name: "sma", code: sma }))
              const { id } = yield* Effect.flatMap(Optimizations, (o) =>
                o.submit(caller, program.id, {
                  ...request,
                  space: { fast: { min: 2, max: 9, step: 1 }, slow: { min: 20, max: 40, step: 10 } }
                } as any))
              const done = yield* finished(instance, caller, program.id, id)
              return { done, wakes }
            })
          )
          // 24 search trials and the best point's run: woken a few times as the queue ran dry, not 25.
          expect(done).toMatchObject({ status: "completed", trials_done: 25, trials_total: 25 })
          expect(wakes).toBeGreaterThan(0)
          expect(wakes).toBeLessThan(10)
        }),
      { timeout: 150_000 }
    )

    it.scopedLive(
      "a search whose bars are gone when it runs fails for good, each trial saying why, none tried again",
      () =>
        Effect.gen(function*() {
          const storageConfig = yield* durableStorage(storage, "tp-opt-gone-")
          // Queued over a dataset's 48 hourly bars by an instance without workers; then the bars go.
          const { caller, id, programId } = yield* queuedWithoutWorkers(storageConfig, "optgone", (caller, programId) =>
            Effect.gen(function*() {
              const from = Date.parse(request.start)
              const csv = Array.from(
                { length: 48 },
                (_, i) => [from + i * 3_600_000, 100 + i, 101 + i, 99 + i, 100 + i, 10]
              )
              yield* (yield* Datasets).importFiles(
                caller,
                { name: "gone", venue: "venue1", symbol: "BTC", timeframe: "1h" },
                Stream.make({
                  bytes: Stream.make(new TextEncoder().encode(`time,open,high,low,close,volume\n${csv.join("\n")}`))
                })
              )
              const queued = yield* Effect.flatMap(Optimizations, (o) =>
                o.submit(caller, programId, {
                  ...request,
                  exchange: "dataset:gone",
                  end: new Date(from + 48 * 3_600_000).toISOString()
                } as any))
              const sql = yield* SqlClient.SqlClient
              yield* sql`DELETE FROM candle_days WHERE series_id IN (
                    SELECT s.id FROM candle_series s JOIN market_datasets d ON d.id = s.dataset_id
                    WHERE d.user_id = ${caller.id} AND d.name = 'gone')`
              return queued.id
            }))
          const second = yield* startInstance(storageConfig, yield* Effect.scope, { concurrency: 2 })
          const done = yield* finished(second, caller, programId, id)
          expect(done).toMatchObject({
            status: "failed",
            error: "Every trial failed; the first: No 1h candles of BTC in the range"
          })
          const sql = yield* on(second, SqlClient.SqlClient)
          const trials = yield* on(
            second,
            sql<{ status: string; attempts: number; error: string }>`
              SELECT status, attempts, error FROM optimization_trials WHERE optimization_id = ${id}`
          )
          expect(trials.length).toBe(9)
          for (const trial of trials) {
            expect(trial).toEqual({ status: "failed", attempts: 1, error: "No 1h candles of BTC in the range" })
          }
        }),
      { timeout: 150_000 }
    )

    it.scopedLive(
      "an optimisation's reads leave out the job's code, space and parameters; a program's owner checked alone answers as its read does",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 0 })
          yield* on(
            instance,
            Effect.gen(function*() {
              const caller = yield* newCaller("optreads")
              const programs = yield* Programs
              const optimizations = yield* Optimizations
              const program = yield* programs.create(caller, { name: "sma", code: sma })
              const { id } = yield* optimizations.submit(caller, program.id, request as any)

              const view = Option.getOrThrow(yield* Effect.flatMap(OptimizationsRepo, (repo) => repo.view(id)))
              expect(view).toMatchObject({ id, user_id: caller.id, program_id: program.id, status: "queued" })
              for (const column of ["code", "space", "params", "lease_until", "claimed_by"]) {
                expect(column in view).toBe(false)
              }
              expect(yield* optimizations.get(caller, program.id, id)).toMatchObject({
                id,
                status: "queued",
                trials_total: 10
              })

              yield* programs.check(caller, program.id)
              const other = yield* newCaller("optreads_other")
              const forbidden = yield* Effect.exit(programs.check(other, program.id))
              expect(Exit.isFailure(forbidden) && JSON.stringify(forbidden.cause)).toContain("Forbidden")
              const unknown = yield* Effect.exit(programs.check(caller, (program.id + 100_000) as typeof program.id))
              expect(Exit.isFailure(unknown) && JSON.stringify(unknown.cause)).toContain("NotFound")
            })
          )
        }),
      { timeout: 60_000 }
    )
  })
}
