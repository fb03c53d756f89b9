import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"
import { ReconciliationEvent, ReconciliationKind } from "./Automation.js"

const NullableNumeric = Schema.NullOr(Schema.NumberFromString)

export const ReconciliationRow = Schema.Struct({
  id: Schema.Int,
  account_id: AccountId,
  exchange: Exchange,
  kind: ReconciliationKind,
  symbol: Schema.NullOr(Schema.String),
  order_id: Schema.NullOr(Schema.Int),
  ledger_size: NullableNumeric,
  venue_size: NullableNumeric,
  message: Schema.String,
  created_at: IsoTimestamp
})
export type ReconciliationRow = typeof ReconciliationRow.Type

const NewEvent = ReconciliationRow.pipe(Schema.omit("id", "created_at"))

/** The channel every instance's streams hear reconciliation events on. */
export const reconciliationChannel = "reconciliation_events"

/** What the channel carries: an event and its account's owner. */
export const ReconciliationNotice = Schema.Struct({ user_id: UserId, event: ReconciliationEvent })
export type NewReconciliationEvent = typeof NewEvent.Type

/** The accounts that trade at a venue, and the differences the reconciliation found with it. */
export class ReconciliationRepo
  extends Effect.Service<ReconciliationRepo>()("@trading-platform/core/ReconciliationRepo", {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /**
       * Active accounts with credentials for their venue (venue1 when enabled, else venue2) outside
       * venue1's paper environment: those whose orders go to the venue when it is in http mode.
       */
      const liveAccounts = SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({ account_id: AccountId, user_id: UserId, exchange: Exchange }),
        execute: () =>
          sql`
        SELECT a.id AS account_id, a.user_id, c.venue AS exchange FROM accounts a
        JOIN venue_credentials c ON c.account_id = a.id
          AND c.venue = CASE WHEN a.venue1_enabled THEN 'venue1' ELSE 'venue2' END
        WHERE a.is_active AND a.venue1_environment IS DISTINCT FROM 'paper' ORDER BY a.id`
      })

      /**
       * Records an event and tells every instance's streams (`reconciliationChannel`, at commit)
       * with the owner's id, as a `ReconciliationNotice` in JSON.
       */
      const insert = (event: NewReconciliationEvent, user_id: UserId, at: Date) =>
        Effect.gen(function*() {
          const row = yield* Schema.encode(NewEvent)(event)
          const [stored] = yield* sql`
            INSERT INTO reconciliation_events ${sql.insert({ ...row, created_at: at })} RETURNING *`
          const notice = yield* Schema.encode(ReconciliationNotice)({
            user_id,
            event: new ReconciliationEvent(yield* Schema.decodeUnknown(ReconciliationRow)(stored))
          })
          yield* sql`SELECT pg_notify(${reconciliationChannel}, ${JSON.stringify(notice)})`
        })

      const list = SqlSchema.findAll({
        Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
        Result: ReconciliationRow,
        execute: (q) =>
          sql`
        SELECT * FROM reconciliation_events WHERE account_id = ${q.account_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
      })

      /** The last balance difference recorded for the account, so the same one is not recorded every pass. */
      const lastBalance = SqlSchema.findOne({
        Request: AccountId,
        Result: ReconciliationRow,
        execute: (id) =>
          sql`
        SELECT * FROM reconciliation_events WHERE account_id = ${id} AND kind IN ('balance_differs', 'balance_matches')
        ORDER BY id DESC LIMIT 1`
      })

      /** Whether the account has an event of this kind about the order already: a condition met on every attempt is recorded once. */
      const recorded = (
        q: { readonly account_id: AccountId; readonly order_id: number; readonly kind: ReconciliationKind }
      ) =>
        Effect.map(
          sql`
        SELECT 1 FROM reconciliation_events
        WHERE account_id = ${q.account_id} AND order_id = ${q.order_id} AND kind = ${q.kind} LIMIT 1`,
          (rows) => rows.length > 0
        )

      return { liveAccounts, insert, list, lastBalance, recorded } as const
    })
  })
{}
