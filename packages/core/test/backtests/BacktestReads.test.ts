import { describe, expect, it } from "@effect/vitest"
import { Backtests, Programs } from "@trading-platform/core"
import { Effect, Exit, Option } from "effect"
import { BacktestsRepo } from "../../src/backtests/BacktestsRepo.js"
import { newCaller } from "../support/Callers.js"
import { on, startInstance } from "../support/Instances.js"
import { testStorages } from "../support/TestStorage.js"

const run = {
  symbol: "BTC",
  exchange: "venue1",
  timeframe: "1h",
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-08T00:00:00Z",
  initial_balance: 10_000,
  fee_rate: 0.00035,
  slippage: 0.0005,
  leverage: 1
} as const

// A program's source can be 200,000 characters; the job keeps a copy that only its thread reads.
const code = `export const decide = () => ({ operation: "hold" })\n${"// padding\n".repeat(5_000)}`

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`reads of a backtest over ${storage.name}`, () => {
    it.scopedLive("leave out the job's code; a cancel checks the owner alone", () =>
      Effect.gen(function*() {
        const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 0 })
        yield* on(
          instance,
          Effect.gen(function*() {
            const backtests = yield* Backtests
            const repo = yield* BacktestsRepo
            const caller = yield* newCaller("reads")
            const program = yield* Effect.flatMap(Programs, (programs) =>
              programs.create(caller, { name: "Holds", code }))
            const { id } = yield* backtests.submit(caller, program.id, run)

            const row = Option.getOrThrow(yield* repo.findById(id))
            expect(row).toMatchObject({ id, user_id: caller.id, status: "queued" })
            expect("code" in row).toBe(false)
            expect(Option.getOrThrow(yield* repo.owner(id))).toEqual({ user_id: caller.id })
            expect(yield* repo.owner((id + 100_000) as typeof id)).toEqual(Option.none())

            const other = yield* newCaller("reads_other")
            const forbidden = yield* Effect.exit(backtests.cancel(other, id))
            expect(Exit.isFailure(forbidden) && JSON.stringify(forbidden.cause)).toContain("Forbidden")
            const unknown = yield* Effect.exit(backtests.cancel(caller, (id + 100_000) as typeof id))
            expect(Exit.isFailure(unknown) && JSON.stringify(unknown.cause)).toContain("NotFound")
            expect((yield* backtests.get(caller, id)).status).toBe("queued")
            expect((yield* backtests.cancel(caller, id)).status).toBe("cancelled")
          })
        )
      }), { timeout: 60_000 })
  })
}
