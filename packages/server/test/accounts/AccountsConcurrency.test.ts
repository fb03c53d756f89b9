import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import { call, signUp, TestServer } from "../support/TestServer.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`concurrent account updates over ${storage.name}`, () => {
    layer(TestServer({ storage }), { timeout: "120 seconds" })((it) => {
      it.effect("two updates racing on leverage apply one after the other: the rule holds, and the second sees the first", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp("race")
          for (let round = 0; round < 15; round++) {
            const account = yield* createAccount(token, { default_leverage: 2, max_leverage: 10 })
            const path = `/api/account/${account.id}`
            // Each is valid against the row as it was; together they break default <= max.
            const [lowerMax, raiseDefault] = yield* Effect.all([
              call("PUT", path, { token, body: { max_leverage: 3 } }),
              call("PUT", path, { token, body: { default_leverage: 5 } })
            ], { concurrency: "unbounded" })
            const statuses = [lowerMax.status, raiseDefault.status].sort()
            expect(statuses).toEqual([200, 422])
            const final = (yield* call("GET", path, { token })).body
            expect(final.default_leverage).toBeLessThanOrEqual(final.max_leverage)
            expect(final).toMatchObject(
              lowerMax.status === 200
                ? { default_leverage: 2, max_leverage: 3 }
                : { default_leverage: 5, max_leverage: 10 }
            )
          }
        }))
    })
  })
}
