import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { Exchange } from "./Venue.js"

export const VenueCredentialsRow = Schema.Struct({
  account_id: AccountId,
  venue: Exchange,
  environment: Schema.String,
  /** The wallet address; null for API keys, which are secret too. */
  public_id: Schema.NullOr(Schema.String),
  /** The secret sealed by `Secrets`. */
  secret_sealed: Schema.String
})
export type VenueCredentialsRow = typeof VenueCredentialsRow.Type

/** SQL for venue credentials, one row per account and venue; no rules here. */
export class VenueCredentialsRepo
  extends Effect.Service<VenueCredentialsRepo>()("@trading-platform/core/VenueCredentialsRepo", {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const upsert = SqlSchema.void({
        Request: Schema.Struct({ ...VenueCredentialsRow.fields, now: Schema.DateFromSelf }),
        execute: (c) =>
          sql`
        INSERT INTO venue_credentials (account_id, venue, environment, public_id, secret_sealed, created_at, updated_at)
        VALUES (${c.account_id}, ${c.venue}, ${c.environment}, ${c.public_id}, ${c.secret_sealed}, ${c.now}, ${c.now})
        ON CONFLICT (account_id, venue) DO UPDATE SET environment = EXCLUDED.environment, public_id = EXCLUDED.public_id,
          secret_sealed = EXCLUDED.secret_sealed, updated_at = EXCLUDED.updated_at`
      })
      const find = SqlSchema.findOne({
        Request: Schema.Struct({ account_id: AccountId, venue: Exchange }),
        Result: VenueCredentialsRow,
        execute: (q) =>
          sql`
        SELECT account_id, venue, environment, public_id, secret_sealed FROM venue_credentials
        WHERE account_id = ${q.account_id} AND venue = ${q.venue}`
      })

      return { upsert, find } as const
    })
  })
{}
