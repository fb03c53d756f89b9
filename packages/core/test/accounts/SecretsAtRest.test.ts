import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { Accounts, PlatformLive, Users, VenueAccounts } from "@trading-platform/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"
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
          expect(dump.match(/v2:/g)?.length).toBe(3)
        }))

      it.effect("a venue secret copied into another account's row does not open; one sealed in the v1 format still does", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const accounts = yield* Accounts
          const venueAccounts = yield* VenueAccounts
          const sql = yield* SqlClient.SqlClient
          const user = yield* users.register({
            email: "moved@example.com",
            username: "moved",
            password: "long password"
          })
          const caller = {
            id: user.id,
            email: user.email,
            username: user.username,
            created_at: user.created_at,
            sessionId: 1 as never
          }
          const victim = yield* accounts.create(caller, { name: "victim" })
          const other = yield* accounts.create(caller, { name: "other" })
          const wallet = (privateKey: string) => ({
            environment: "testnet" as const,
            wallet_address: `0x${"cd".repeat(20)}`,
            private_key: privateKey
          })
          yield* venueAccounts.storeWallet(caller, victim.id, wallet(`0x${"11".repeat(32)}`))
          yield* venueAccounts.storeWallet(caller, other.id, wallet(`0x${"22".repeat(32)}`))
          const opened = yield* venueAccounts.credentials(victim.id, "venue1")
          expect(Option.map(opened, (c) => c.kind === "wallet" && c.privateKey)).toEqual(
            Option.some(`0x${"11".repeat(32)}`)
          )

          // Someone with write access to the table moves the victim's sealed key to the other account.
          yield* sql`
            UPDATE venue_credentials SET secret_sealed = (
              SELECT secret_sealed FROM venue_credentials WHERE account_id = ${victim.id} AND venue = 'venue1')
            WHERE account_id = ${other.id} AND venue = 'venue1'`
          const moved = yield* Effect.exit(venueAccounts.credentials(other.id, "venue1"))
          expect(Exit.isFailure(moved) && Cause.isDie(moved.cause)).toBe(true)

          // Sealed by the version before v2 under the tests' SECRET_KEY: still read, and sealed anew when next written.
          const sealedByV1 = "v1:ejMrGelyGDxdWH46:K8sOTpU3G8pkCTLxNVIOfA==:znOKmUUo0m6I2CGrx3aV+aDQ"
          yield* sql`UPDATE venue_credentials SET secret_sealed = ${sealedByV1} WHERE account_id = ${other.id}`
          const old = yield* venueAccounts.credentials(other.id, "venue1")
          expect(Option.map(old, (c) => c.kind === "wallet" && c.privateKey)).toEqual(Option.some("0xsealed-before-v2"))
          yield* venueAccounts.storeWallet(caller, other.id, wallet(`0x${"33".repeat(32)}`))
          const [row] = yield* sql<{ secret_sealed: string }>`
            SELECT secret_sealed FROM venue_credentials WHERE account_id = ${other.id}`
          expect(row!.secret_sealed.startsWith("v2:")).toBe(true)
        }))
    })
  })
}
