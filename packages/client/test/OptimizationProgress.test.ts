import { FetchHttpClient } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { createClient, LiveStreamError, makeClient } from "@trading-platform/client"
import { ProgramId } from "@trading-platform/core/contract"
import { testStorages } from "@trading-platform/core/testing"
import { Chunk, Effect, Stream } from "effect"
import { createProgram } from "../../server/test/support/Automation.js"
import { BacktestServer, shortRun } from "../../server/test/support/Backtests.js"
import { baseUrl, signUp } from "../../server/test/support/TestServer.js"

const searched = `export const parameters = { portion: { kind: "float", min: 0.1, max: 1, default: 0.5 } }
let n = 0
export function decide(data) {
  if (++n % 10 !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: data.params.portion }
}
`

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

layer(BacktestServer(testStorages[0]!), { timeout: "120 seconds" })(
  "an optimisation's progress in the clients",
  (it) => {
    it.effect("the Effect client starts one; both clients read its trials and follow its progress stream to its final status; an unknown one fails at once", () =>
      Effect.gen(function*() {
        const user = yield* signUp("optclient")
        const program = ProgramId.make(yield* createProgram(user.token, searched))
        const options = { baseUrl: yield* baseUrl, token: user.token, retry: { base: "300 millis" } } as const
        const client = yield* makeClient(options).pipe(Effect.provide(FetchHttpClient.layer))
        const queued = yield* client.optimizations.submit({
          path: { id: program },
          payload: {
            ...shortRun,
            timeframe: "1h",
            search: "grid",
            space: { portion: { steps: 3 } },
            objective: "total_return"
          }
        })
        expect(queued).toMatchObject({ status: "queued", trials_total: 4 })
        for (;;) {
          const current = yield* client.optimizations.get({ path: { id: program, optimization_id: queued.id } })
          if (current.status === "completed") break
          expect(["queued", "running"]).toContain(current.status)
          yield* realPause
        }
        const events = Chunk.toArray(yield* Stream.runCollect(client.optimizationProgress(program, queued.id)))
        expect(events.at(-1)).toMatchObject({ id: queued.id, status: "completed", trials_done: 4, trials_total: 4 })
        expect(events.at(-1)!.best?.params).toHaveProperty("portion")

        const promises = createClient(options)
        const trials = await_(promises.optimizations.trials({
          path: { id: program, optimization_id: queued.id },
          urlParams: { sort: "objective", order: "desc", role: "search" }
        }))
        const page = yield* trials
        expect(page.total).toBe(3)
        const seen = []
        for (const progress of yield* collect(promises.optimizationProgress(program, queued.id))) {
          seen.push(progress.status)
        }
        expect(seen.at(-1)).toBe("completed")

        const unknown = yield* client.optimizationProgress(program, 999_999).pipe(Stream.runDrain, Effect.flip)
        expect(unknown).toBeInstanceOf(LiveStreamError)
        expect(unknown).toMatchObject({ status: 404, code: "not_found", retryable: false })
      }))
  }
)

const await_ = <A>(promise: Promise<A>) => Effect.promise(() => promise)

const collect = <A>(iterable: AsyncIterable<A>) =>
  Effect.promise(async () => {
    const all: Array<A> = []
    for await (const item of iterable) all.push(item)
    return all
  })
