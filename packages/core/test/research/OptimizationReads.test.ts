import { describe, expect, it } from "@effect/vitest"
import { Optimizations, Programs } from "@trading-platform/core"
import { Effect, Exit, Option } from "effect"
import { OptimizationsRepo } from "../../src/research/OptimizationsRepo.js"
import { newCaller } from "../support/Callers.js"
import { on, startInstance } from "../support/Instances.js"
import { testStorages } from "../support/TestStorage.js"

// A program's source can be 200,000 characters; the job keeps a copy that only its trial threads read.
const code = `export const parameters = { fast: { kind: "int", min: 2, max: 30, default: 5 } }
export const decide = () => ({ operation: "hold" })
${"// padding\n".repeat(5_000)}`

const request = {
  symbol: "BTC",
  timeframe: "1h",
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-15T00:00:00Z",
  search: "grid",
  space: { fast: { min: 3, max: 9, step: 3 } },
  objective: "total_return"
} as const

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`reads of an optimisation over ${storage.name}`, () => {
    it.scopedLive(
      "leave out the job's code, space and parameters; a program's owner checked alone answers as its read does",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 0 })
          yield* on(
            instance,
            Effect.gen(function*() {
              const caller = yield* newCaller("optreads")
              const programs = yield* Programs
              const optimizations = yield* Optimizations
              const program = yield* programs.create(caller, { name: "Holds", code })
              const { id } = yield* optimizations.submit(caller, program.id, request as any)

              const view = Option.getOrThrow(yield* Effect.flatMap(OptimizationsRepo, (repo) => repo.view(id)))
              expect(view).toMatchObject({ id, user_id: caller.id, program_id: program.id, status: "queued" })
              for (const column of ["code", "space", "params", "lease_until", "claimed_by"]) {
                expect(column in view).toBe(false)
              }
              expect(yield* optimizations.get(caller, program.id, id)).toMatchObject({
                id,
                status: "queued",
                trials_total: 4
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
