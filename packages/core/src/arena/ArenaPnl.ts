import { Schema } from "effect"
import { AccountId } from "../accounts/Account.js"

/** How fresh arena PnL is: `ok`, `degraded` (stale, never refreshed, or some accounts not marked) or `error` (the last refresh failed). */
export const PnlRefreshState = Schema.Literal("ok", "degraded", "error")

/** `GET /api/arena/check-pnl-status`; `reason` says why when the status is not `ok`. */
export class PnlRefreshStatus extends Schema.Class<PnlRefreshStatus>("PnlRefreshStatus")({
  status: PnlRefreshState,
  last_refresh_at: Schema.NullOr(Schema.String),
  /** Accounts whose newest fill is not yet in their PnL, or that could not be marked. */
  unsynced: Schema.Int,
  reason: Schema.optional(Schema.String)
}) {}

/** One account's PnL as of its last refresh. */
export class AccountPnl extends Schema.Class<AccountPnl>("AccountPnl")({
  account_id: AccountId,
  name: Schema.String,
  /** Profit of the fills that reduced positions, before fees. */
  realized_pnl: Schema.Number,
  /** Open positions marked to the venue's price at the refresh. */
  unrealized_pnl: Schema.Number,
  fees: Schema.Number,
  /** realized + unrealized − fees. */
  total_pnl: Schema.Number,
  refreshed_at: Schema.String,
  error: Schema.NullOr(Schema.String)
}) {}

export class AccountPnlList
  extends Schema.Class<AccountPnlList>("AccountPnlList")({ accounts: Schema.Array(AccountPnl) })
{}
