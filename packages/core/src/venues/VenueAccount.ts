import { Schema } from "effect"
import { Venue1Environment } from "../accounts/Account.js"

const allErrors = { parseOptions: { errors: "all" } } as const

/**
 * The credentials' formats, checked before a venue is asked (a malformed one answers 400 naming the
 * rule); the simulated venues accept exactly these. Messages never quote the value: these are secrets.
 */
export const Venue1Address = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-fA-F]{40}$/, { message: () => "must be 0x and 40 hex digits" })
).annotations({ description: "The wallet's address: 0x and 40 hex digits" })
export const Venue1PrivateKey = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-fA-F]{64}$/, { message: () => "must be 0x and 64 hex digits" })
).annotations({ description: "The wallet's private key: 0x and 64 hex digits; stored sealed, never returned" })
export const Venue2Key = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9]{16,128}$/, { message: () => "must be 16 to 128 letters and digits" })
).annotations({ description: "16 to 128 letters and digits; stored sealed, never returned" })

export const WalletRequest = Schema.Struct({
  environment: Venue1Environment,
  wallet_address: Venue1Address,
  private_key: Venue1PrivateKey
}).annotations({
  ...allErrors,
  examples: [{ environment: "testnet", wallet_address: `0x${"1".repeat(40)}`, private_key: `0x${"a".repeat(64)}` }]
})
export type WalletRequest = typeof WalletRequest.Type

export const Venue2SetupRequest = Schema.Struct({
  environment: Schema.Literal("testnet", "mainnet"),
  api_key: Venue2Key,
  secret_key: Venue2Key,
  max_leverage: Schema.optional(Schema.Int),
  default_leverage: Schema.optional(Schema.Int)
}).annotations({
  ...allErrors,
  examples: [{ environment: "testnet", api_key: "AK0123456789abcdefXYZ", secret_key: "SK0123456789abcdefSECRETVALUE" }]
})
export type Venue2SetupRequest = typeof Venue2SetupRequest.Type

/** The answer of a wallet connectivity test. */
export class WalletTestResult extends Schema.Class<WalletTestResult>("WalletTestResult")({
  success: Schema.Boolean,
  latency_ms: Schema.NullOr(Schema.Number),
  message: Schema.NullOr(Schema.String),
  /** The account's AI model. */
  model: Schema.NullOr(Schema.String)
}) {}

/** A plain acknowledgement of a stored setting. */
export class Acknowledgement extends Schema.Class<Acknowledgement>("Acknowledgement")({
  status: Schema.Literal("success"),
  message: Schema.NullOr(Schema.String)
}) {}
