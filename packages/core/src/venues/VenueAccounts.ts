import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { NotFound } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { type SealedAt, Secrets } from "../secrets/Secrets.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { type Exchange, type VenueCredentials, Venues } from "./Venue.js"
import { Acknowledgement, type Venue2SetupRequest, type WalletRequest, WalletTestResult } from "./VenueAccount.js"
import { VenueCredentialsRepo } from "./VenueCredentialsRepo.js"

/** Where an account's credentials for a venue are sealed: they open only in that row. */
const credentialsAt = (account: AccountId, venue: Exchange): SealedAt => ({
  table: "venue_credentials",
  column: "secret_sealed",
  row: `${account}/${venue}`
})

/** Connects accounts to the venues: venue1 wallets and venue2 API keys, sealed at rest. */
export class VenueAccounts extends Effect.Service<VenueAccounts>()("@trading-platform/core/VenueAccounts", {
  effect: Effect.gen(function*() {
    const accounts = yield* Accounts
    const repo = yield* VenueCredentialsRepo
    const secrets = yield* Secrets
    const venues = yield* Venues
    const sql = yield* SqlClient.SqlClient

    // The account's venue1_environment becomes the wallet's, in the same transaction.
    const storeWallet = (caller: CurrentUserShape, id: AccountId, input: WalletRequest) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        const at = yield* now
        yield* sql.withTransaction(
          Effect.zipRight(
            repo.upsert({
              account_id: id,
              venue: "venue1",
              environment: input.environment,
              public_id: input.wallet_address,
              secret_sealed: secrets.seal(input.private_key, credentialsAt(id, "venue1")),
              now: at
            }),
            accounts.setVenue1Environment(account, input.environment)
          )
        )
        return new Acknowledgement({ status: "success", message: `venue1 wallet stored for account ${id}` })
      }).pipe(dieOnStorageFailure, withRequestSpan("VenueAccounts.storeWallet", { attributes: { id } }))

    /** Asks venue1 about the stored wallet; a refusal is a failed test, an unreachable venue an error. */
    const testWallet = (caller: CurrentUserShape, id: AccountId) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        const stored = yield* repo.find({ account_id: id, venue: "venue1" })
        if (Option.isNone(stored) || stored.value.public_id === null) {
          return yield* new NotFound({ error: `Account ${id} has no venue1 wallet; store one first` })
        }
        const credentials = {
          kind: "wallet",
          environment: stored.value.environment,
          address: stored.value.public_id,
          privateKey: secrets.open(stored.value.secret_sealed, credentialsAt(id, "venue1"))
        } as const
        // Latency is real elapsed time, whatever clock the platform runs on.
        const started = performance.now()
        const outcome = yield* Effect.either(venues.venue1.checkCredentials(credentials))
        const latency_ms = Math.round((performance.now() - started) * 100) / 100
        if (outcome._tag === "Left" && outcome.left._tag !== "VenueRejected") return yield* outcome.left
        return new WalletTestResult({
          success: outcome._tag === "Right",
          latency_ms,
          message: outcome._tag === "Right" ? "venue1 accepted the wallet" : outcome.left.error,
          model: account.model
        })
      }).pipe(dieOnStorageFailure, withRequestSpan("VenueAccounts.testWallet", { attributes: { id } }))

    /** Checks the keys against venue2 before storing them, and applies the leverage given. */
    const setupVenue2 = (caller: CurrentUserShape, id: AccountId, input: Venue2SetupRequest) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned(caller, id)
        // The leverage is checked before the venue is asked, and stored with the keys.
        yield* accounts.withLeverage(account, input)
        yield* venues.venue2.checkCredentials({
          kind: "apiKey",
          environment: input.environment,
          apiKey: input.api_key,
          secretKey: input.secret_key
        })
        const at = yield* now
        yield* sql.withTransaction(
          Effect.zipRight(
            repo.upsert({
              account_id: id,
              venue: "venue2",
              environment: input.environment,
              public_id: null,
              secret_sealed: secrets.seal(
                JSON.stringify({ api_key: input.api_key, secret_key: input.secret_key }),
                credentialsAt(id, "venue2")
              ),
              now: at
            }),
            accounts.setLeverage(account, input)
          )
        )
        return new Acknowledgement({ status: "success", message: `venue2 keys accepted and stored for account ${id}` })
      }).pipe(dieOnStorageFailure, withRequestSpan("VenueAccounts.setupVenue2", { attributes: { id } }))

    /** What the venue needs to act for the account (its stored wallet or keys, opened), if it has any. */
    const credentials = (id: AccountId, venue: Exchange) =>
      Effect.map(
        repo.find({ account_id: id, venue }),
        Option.map((row): VenueCredentials => {
          const secret = secrets.open(row.secret_sealed, credentialsAt(id, venue))
          if (venue === "venue1") {
            return { kind: "wallet", environment: row.environment, address: row.public_id ?? "", privateKey: secret }
          }
          const keys = JSON.parse(secret) as { api_key: string; secret_key: string }
          return { kind: "apiKey", environment: row.environment, apiKey: keys.api_key, secretKey: keys.secret_key }
        })
      ).pipe(withRequestSpan("VenueAccounts.credentials", { attributes: { id, venue } }))

    return { storeWallet, testWallet, setupVenue2, credentials } as const
  }),
  dependencies: [VenueCredentialsRepo.Default]
}) {}
