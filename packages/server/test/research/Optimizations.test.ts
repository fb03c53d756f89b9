import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createProgram } from "../support/Automation.js"
import { BacktestServer, isFinished, shortRun, waitForBacktest } from "../support/Backtests.js"
import { smaGrid, smaProgram, waitForOptimization } from "../support/Optimizations.js"
import { call, expectError, signUp } from "../support/TestServer.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`optimisations over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "180 seconds" })((it) => {
      it.effect("a grid runs every point once, ranks them, and its best point runs as a plain backtest of it does", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, smaProgram)
          const queued = yield* call("POST", `/api/programs/${program}/optimizations`, { token, body: smaGrid })
          expect(queued.status).toBe(202)
          expect(queued.body).toMatchObject({ status: "queued", trials_total: 10, trials_done: 0, best: null })
          const done = yield* waitForOptimization(token, program, queued.body.id)
          expect(done).toMatchObject({ status: "completed", trials_done: 10, error: null })
          expect(done.result.stopped).toBe("trials")

          const base = `/api/programs/${program}/optimizations/${queued.body.id}`
          const all = (yield* call("GET", `${base}/trials?role=search&sort=objective&order=desc`, { token })).body
          expect(all.total).toBe(9)
          const points = all.trials.map((t: any) => `${t.params.fast}/${t.params.slow}`).sort()
          expect(points).toEqual(["3/20", "3/30", "3/40", "6/20", "6/30", "6/40", "9/20", "9/30", "9/40"])
          for (const t of all.trials) {
            expect(t).toMatchObject({ status: "completed", role: "search", fold: 0, rejected: null })
            expect(t.params.size).toBe(0.8)
            expect(t.objective).toBe(t.metrics.total_return)
          }
          const objectives = all.trials.map((t: any) => t.objective)
          expect(objectives).toEqual([...objectives].sort((a: number, b: number) => b - a))
          expect(done.result.best.objective).toBe(objectives[0])
          expect(done.result.best.params).toEqual(all.trials[0].params)
          expect(done.result.equity_curve.length).toBeGreaterThan(10)

          // The same rulebook: a backtest of the best point gives the trial's metrics.
          const backtest = yield* call("POST", `/api/programs/${program}/backtest`, {
            token,
            body: { ...shortRun, params: done.result.best.params }
          })
          const ran = yield* waitForBacktest(token, backtest.body.id, isFinished)
          expect(ran.metrics).toEqual(done.result.best.metrics)

          // Pages, and sorting by a metric.
          const page = (yield* call("GET", `${base}/trials?sort=sharpe&order=asc&limit=4&offset=2`, { token })).body
          expect(page.total).toBe(10)
          expect(page.trials).toHaveLength(4)
          const sharpes = page.trials.map((t: any) => t.metrics.sharpe)
          expect(sharpes).toEqual([...sharpes].sort((a: number, b: number) => a - b))
          const list = (yield* call("GET", `/api/programs/${program}/optimizations`, { token })).body
          expect(list.optimizations.map((o: any) => o.id)).toEqual([queued.body.id])

          // The progress stream ends with the final status.
          const stream = yield* call("GET", `${base}/stream`, { token })
          expect(stream.status).toBe(200)
          expect(stream.text).toContain("event: progress")
          expect(stream.text).toContain(`"status":"completed","trials_done":10`)

          // Finished: cancelling conflicts; deleting removes it with its trials.
          expectError(yield* call("POST", `${base}/cancel`, { token }), 409, "conflict")
          expect((yield* call("DELETE", base, { token })).status).toBe(204)
          expectError(yield* call("GET", base, { token }), 404, "not_found")
          expectError(yield* call("GET", `${base}/trials`, { token }), 404, "not_found")
        }))

      it.effect("random and TPE searches are seeded, constraints reject trials, and walk-forward tests each fold's best out of sample", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, smaProgram)
          const run = (body: object) =>
            Effect.gen(function*() {
              const queued = yield* call("POST", `/api/programs/${program}/optimizations`, { token, body })
              expect(queued.status).toBe(202)
              const done = yield* waitForOptimization(token, program, queued.body.id)
              const trials = (yield* call(
                "GET",
                `/api/programs/${program}/optimizations/${queued.body.id}/trials?limit=500`,
                { token }
              )).body.trials
              return { done, trials }
            })
          const random = {
            ...shortRun,
            search: "random",
            space: { fast: {}, size: {} },
            budget: { trials: 6 },
            seed: 7
          }
          const first = yield* run(random)
          const again = yield* run(random)
          expect(first.done.status).toBe("completed")
          expect(first.trials.map((t: any) => t.params)).toEqual(again.trials.map((t: any) => t.params))
          for (const t of first.trials.filter((t: any) => t.role === "search")) {
            expect(Number.isInteger(t.params.fast)).toBe(true)
            expect(t.params.slow).toBe(20)
          }

          const tpe = yield* run({
            ...random,
            search: "tpe",
            budget: { trials: 12 },
            constraints: { min_trades: 1000 }
          })
          expect(tpe.done.status).toBe("completed")
          const searched = tpe.trials.filter((t: any) => t.role === "search")
          expect(searched).toHaveLength(12)
          // No trial can meet the constraint: none has an objective, and there is no best.
          for (const t of searched) {
            expect(t).toMatchObject({ objective: null, rejected: expect.stringContaining("min_trades") })
          }
          expect(tpe.done.result.best).toBeNull()
          // Without a best point there is no run after the search: the total counts the trials planned.
          expect(tpe.done).toMatchObject({ trials_total: 12, trials_done: 12 })

          // Two weeks of hourly bars: three folds of 120 bars in sample and 48 out of sample.
          const walk = yield* run({
            ...smaGrid,
            walk_forward: { mode: "rolling", folds: 3, in_sample_bars: 120, out_of_sample_bars: 48 }
          })
          expect(walk.done).toMatchObject({ status: "completed", trials_total: 30, trials_done: 30 })
          const folds = walk.done.result.folds
          expect(folds).toHaveLength(3)
          expect(folds[1].in_sample.start).toBe("2025-01-03T00:00:00.000Z")
          expect(folds[0].out_of_sample.start).toBe(folds[0].in_sample.end)
          for (const fold of folds) {
            const ins = walk.trials.filter((t: any) => t.fold === fold.fold && t.role === "search")
            expect(ins).toHaveLength(9)
            expect(fold.best.objective).toBe(Math.max(...ins.map((t: any) => t.objective)))
            const out = walk.trials.find((t: any) => t.fold === fold.fold && t.role === "out_of_sample")
            expect(out.params).toEqual(fold.best.params)
            expect(fold.out_of_sample_metrics.total_pnl_percent).toBe(out.metrics.total_return)
          }
          expect(walk.done.result.walk_forward.in_sample_objective_mean).toBeCloseTo(
            folds.reduce((s: number, f: any) => s + f.best.objective, 0) / 3
          )
          expect(walk.done.result.equity_curve.at(-1).time).toBeLessThanOrEqual(Date.parse(folds[2].out_of_sample.end))
        }))

      it.effect("a bad request answers 400 naming the field, another user's 403, an unknown id or another program 404", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, smaProgram)
          const submit = (body: object, id = program) =>
            call("POST", `/api/programs/${id}/optimizations`, { token, body: { ...smaGrid, ...body } })
          const cases: Array<[object, string]> = [
            [{ space: { width: {} } }, "space.width"],
            [{ space: { fast: { min: 1, max: 9 } } }, "space.fast"],
            [{ space: { fast: { choices: [3] } } }, "space.fast"],
            [{ space: { fast: { steps: 3 } } }, "space.fast.steps"],
            [{ space: { fast: { min: 2, max: 30 }, slow: {} }, budget: { trials: 100 } }, "space"],
            [{ params: { size: 2 } }, "params.size"],
            [{ walk_forward: { folds: 5, in_sample_bars: 200, out_of_sample_bars: 48 } }, "walk_forward"],
            [{ search: "annealing" }, "search"],
            [{ objective: { weights: { alpha: 1 } } }, "objective"],
            [{ budget: { trials: 0 } }, "budget.trials"]
          ]
          for (const [body, field] of cases) {
            const reply = yield* submit(body)
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: any) => i.path).join(" ")).toContain(field)
          }
          const plain = yield* createProgram(token)
          expectError(yield* submit({}, plain), 400, "invalid_input")

          const queued = yield* submit({})
          expect(queued.status).toBe(202)
          const base = `/api/programs/${program}/optimizations/${queued.body.id}`
          const other = yield* signUp()
          for (const url of [base, `${base}/trials`]) {
            expectError(yield* call("GET", url, { token: other.token }), 403, "forbidden")
          }
          expectError(yield* call("DELETE", base, { token: other.token }), 403, "forbidden")
          expectError(yield* call("GET", `/api/programs/${program}/optimizations/999999`, { token }), 404, "not_found")
          expectError(
            yield* call("GET", `/api/programs/${plain}/optimizations/${queued.body.id}`, { token }),
            404,
            "not_found"
          )
          expectError(yield* call("GET", base, {}), 401, "unauthorized")
          // Through a program the caller owns: another user's optimisation is 403, one of another program 404.
          const othersProgram = yield* createProgram(other.token)
          for (
            const [method, path] of [["GET", ""], ["GET", "/trials"], ["GET", "/stream"], ["POST", "/cancel"], [
              "DELETE",
              ""
            ]] as const
          ) {
            expectError(
              yield* call(method, `/api/programs/${othersProgram}/optimizations/${queued.body.id}${path}`, {
                token: other.token
              }),
              403,
              "forbidden"
            )
            expectError(
              yield* call(method, `/api/programs/${plain}/optimizations/${queued.body.id}${path}`, { token }),
              404,
              "not_found"
            )
          }

          // Cancelled while it runs: it and its unfinished trials end cancelled.
          const cancelled = yield* call("POST", `${base}/cancel`, { token })
          expect(cancelled.status).toBe(200)
          expect(cancelled.body.status).toBe("cancelled")
          const trials = (yield* call("GET", `${base}/trials`, { token })).body.trials
          for (const t of trials) expect(["completed", "cancelled", "failed"]).toContain(t.status)
        }))
    })
  })
}
