import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "./TestServer.js"

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/** Polls the account's decision log (workers run in real time) until `done` holds, or dies at the deadline. */
export const waitForRounds = (
  token: string,
  accountId: number,
  done: (rounds: ReadonlyArray<any>) => boolean,
  step: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 30_000
    for (;;) {
      const reply = yield* call("GET", `/api/account/${accountId}/decisions`, { token })
      expect(reply.status).toBe(200)
      if (done(reply.body.decisions)) return reply.body.decisions as ReadonlyArray<any>
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`rounds at the deadline: ${JSON.stringify(reply.body.decisions)}`))
      }
      yield* step
      yield* realPause
    }
  })
