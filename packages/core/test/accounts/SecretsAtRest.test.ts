import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { Accounts, PlatformLive, Users, VenueAccounts } from "@trading-platform/core"
import { Effect, Layer } from "effect"
import { TestConfig, testStorages } from "../support/TestStorage.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`secrets at rest over ${storage.name}`, () => {
    layer(PlatformLive.pipe(Layer.provideMerge(TestConfig(storage))), { timeout: "120 seconds" })((it) => {
      it.effect("no api key, wallet key or venue secret is stored in plain text; accounts only say has_api_key", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const accounts = yield* Accounts
          const venueAccounts = yield* VenueAccounts
          const sql = yield* SqlClient.SqlClient
          const user = yield* users.register({ email: "rest@example.com", username: "rest", password: "long password" })
          const caller = {
            id: user.id,
            email: user.email,
            username: user.username,
            created_at: user.created_at,
            sessionId: 1 as never
          }
          const secrets = {
            apiKey: "sk-live-0123456789-plain-text-must-not-appear",
            privateKey: `0x${"7f3a".repeat(16)}`,
            venue2Key: "AKplaintext0123456789",
            venue2Secret: "SKplaintextSECRET0123456789"
          }
          const account = yield* accounts.create(caller, { name: "at rest", api_key: secrets.apiKey })
          expect(account.has_api_key).toBe(true)
          expect(JSON.stringify(account)).not.toContain(secrets.apiKey)
          yield* venueAccounts.storeWallet(caller, account.id, {
            environment: "testnet",
            wallet_address: `0x${"ab".repeat(20)}`,
            private_key: secrets.privateKey
          })
          yield* venueAccounts.setupVenue2(caller, account.id, {
            environment: "testnet",
            api_key: secrets.venue2Key,
            secret_key: secrets.venue2Secret
          })
          expect((yield* venueAccounts.testWallet(caller, account.id)).success).toBe(true)
          const rows = yield* sql<{ row: string }>`
            SELECT accounts::text AS row FROM accounts UNION ALL SELECT venue_credentials::text FROM venue_credentials`
          expect(rows.length).toBe(3)
          const dump = rows.map((r) => r.row).join("\n")
          for (const secret of Object.values(secrets)) expect(dump).not.toContain(secret)
          expect(dump.match(/v1:/g)?.length).toBe(3)
        }))
    })
  })
}
