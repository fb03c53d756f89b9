import { Schema } from "effect"
import { StoredId } from "../http/IdParam.js"
import { documentTrimmed } from "../http/TrimmedText.js"

export const UserId = StoredId.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const SessionId = StoredId.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

const Email = documentTrimmed(
  Schema.Trim.pipe(
    Schema.maxLength(254),
    Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be a valid email address" })
  ),
  { max: 254, nonEmpty: true, format: "email", what: "an e-mail address" }
)
// A new password (register, change); a bound on length keeps hashing cost bounded. The service also
// refuses the 10,000 most common passwords. Logins take any stored password, whatever its length.
const Password = Schema.String.pipe(
  Schema.minLength(10, { message: () => "must be at least 10 characters" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" })
)
const Username = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{3,32}$/, { message: () => "must be 3 to 32 of letters, digits, _ . -" })
)

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  username: Schema.String,
  created_at: Schema.String
}) {}

// Report every invalid field at once, not only the first.
const allErrors = { parseOptions: { errors: "all" } } as const

export const RegisterRequest = Schema.Struct({ email: Email, password: Password, username: Username }).annotations({
  ...allErrors,
  examples: [{ email: "ada@example.com", password: "correct horse", username: "ada" }]
})
export type RegisterRequest = typeof RegisterRequest.Type

export const LoginRequest = Schema.Struct({
  email: documentTrimmed(Schema.Trim.pipe(Schema.maxLength(254)), {
    max: 254,
    nonEmpty: false,
    what: "the e-mail address"
  }),
  password: Schema.String.pipe(Schema.maxLength(256))
}).annotations({ ...allErrors, examples: [{ email: "ada@example.com", password: "correct horse" }] })
export type LoginRequest = typeof LoginRequest.Type

export class LoginResponse extends Schema.Class<LoginResponse>("LoginResponse")({
  session_token: Schema.String,
  token_type: Schema.Literal("bearer"),
  expires_at: Schema.String,
  user: User
}) {}

export const PasswordChangeRequest = Schema.Struct({
  current_password: Schema.String.pipe(Schema.maxLength(256)),
  new_password: Password
}).annotations({ ...allErrors, examples: [{ current_password: "correct horse", new_password: "battery staple" }] })
export type PasswordChangeRequest = typeof PasswordChangeRequest.Type

export const UserDeleteRequest = Schema.Struct({ password: Schema.String.pipe(Schema.maxLength(256)) }).annotations({
  ...allErrors,
  examples: [{ password: "correct horse" }]
})
export type UserDeleteRequest = typeof UserDeleteRequest.Type

export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  expires_at: Schema.String,
  user_agent: Schema.NullOr(Schema.String),
  current: Schema.Boolean
}) {}

export class SessionList extends Schema.Class<SessionList>("SessionList")({
  sessions: Schema.Array(Session)
}) {}
