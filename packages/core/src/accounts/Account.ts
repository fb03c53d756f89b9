import { Schema } from "effect"
import { NonNegativeAmount } from "../http/Amount.js"
import { idParam, StoredId, StoredInt } from "../http/IdParam.js"
import { TrimmedText } from "../http/TrimmedText.js"
import { UserId } from "../users/User.js"

export const AccountId = StoredId.pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type

/** `{account_id}` in a path. */
export const AccountPath = Schema.Struct({ account_id: idParam(AccountId) })

export const AccountType = Schema.Literal("AI", "MANUAL")
export const Venue1Environment = Schema.Literal("paper", "testnet", "mainnet")

/** `isolated`: each position is backed by its own margin; `cross`: also by the account's free cash. */
export const MarginMode = Schema.Literal("isolated", "cross")
export type MarginMode = typeof MarginMode.Type

// Leverage is only checked for being a whole number here; its bounds are a rule (422), not a shape (400).
const Leverage = Schema.Int
const Name = TrimmedText(100)
const Text = Schema.String.pipe(Schema.maxLength(2048))
// One message for every way it can be wrong, so an answer never quotes the secret back.
const apiKeyMessage = { message: () => "must be a string of at most 2048 characters, or null" }
const ApiKey = Schema.optionalWith(
  Schema.Union(Schema.String.pipe(Schema.maxLength(2048, apiKeyMessage)), Schema.Null.annotations(apiKeyMessage))
    .annotations(apiKeyMessage),
  { exact: true }
)

/** What a user may change on an account. */
export const AccountSettings = {
  name: Schema.String,
  is_active: Schema.Boolean,
  show_on_dashboard: Schema.Boolean,
  venue1_enabled: Schema.Boolean,
  avatar_preset_id: Schema.NullOr(Schema.Int),
  base_url: Schema.NullOr(Schema.String),
  model: Schema.NullOr(Schema.String),
  default_leverage: Schema.NullOr(Schema.Int),
  max_leverage: Schema.NullOr(Schema.Int),
  venue1_environment: Schema.NullOr(Venue1Environment),
  margin_mode: MarginMode
}

export class Account extends Schema.Class<Account>("Account")({
  ...AccountSettings,
  id: AccountId,
  user_id: UserId,
  account_type: AccountType,
  initial_capital: Schema.Number,
  current_cash: Schema.Number,
  frozen_cash: Schema.Number,
  /** Whether an `api_key` is stored; the key itself is never returned. */
  has_api_key: Schema.Boolean,
  /** Whether a venue1 wallet is stored (`venue1_environment` is its environment); never the key. */
  has_venue1_wallet: Schema.Boolean,
  /** Whether venue2 API keys are stored; never the keys. */
  has_venue2_keys: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

const allErrors = { parseOptions: { errors: "all" } } as const

export const AccountCreate = Schema.Struct({
  name: Name,
  account_type: Schema.optional(AccountType),
  initial_capital: Schema.optional(NonNegativeAmount),
  model: Schema.optional(Schema.NullOr(Text)),
  base_url: Schema.optional(Schema.NullOr(Text)),
  api_key: ApiKey,
  default_leverage: Schema.optional(Schema.NullOr(Leverage)),
  max_leverage: Schema.optional(Schema.NullOr(Leverage)),
  venue1_enabled: Schema.optional(Schema.Boolean),
  venue1_environment: Schema.optional(Schema.NullOr(Venue1Environment)),
  margin_mode: Schema.optional(MarginMode)
}).annotations({
  ...allErrors,
  examples: [{ name: "paper", initial_capital: 10000, default_leverage: 2, max_leverage: 10 }]
})
export type AccountCreate = typeof AccountCreate.Type

/**
 * An account's update body. An absent field is left as it is; `null`
 * clears a nullable field (and leaves `name` and the flags as they are).
 */
export const AccountUpdate = Schema.Struct({
  api_key: ApiKey,
  base_url: Schema.optional(Schema.NullOr(Text)),
  model: Schema.optional(Schema.NullOr(Text)),
  name: Schema.optional(Schema.NullOr(Name)),
  default_leverage: Schema.optional(Schema.NullOr(Leverage)),
  max_leverage: Schema.optional(Schema.NullOr(Leverage)),
  is_active: Schema.optional(Schema.NullOr(Schema.Boolean)),
  show_on_dashboard: Schema.optional(Schema.NullOr(Schema.Boolean)),
  venue1_enabled: Schema.optional(Schema.NullOr(Schema.Boolean)),
  venue1_environment: Schema.optional(Schema.NullOr(Venue1Environment)),
  avatar_preset_id: Schema.optional(Schema.NullOr(StoredInt)),
  margin_mode: Schema.optional(Schema.NullOr(MarginMode))
}).annotations({ ...allErrors, examples: [{ name: "paper, renamed", default_leverage: 3 }] })
export type AccountUpdate = typeof AccountUpdate.Type

/** Highest leverage each venue allows; an account's venue is venue1 when `venue1_enabled`. */
export const leverageCap = { venue1: 50, venue2: 125 } as const
