import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { summarizeIssues } from "../http/DecodeFailure.js"
import { Conflict, InvalidInput, NotFound, RateLimited, Unauthorized } from "../http/Errors.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "./Authentication.js"
import { LoginFailureStore, makeMemoryLoginFailureStore } from "./LoginFailures.js"
import { ownedBy } from "./Ownership.js"
import { hashPassword, isCommonPassword, scryptParams, verifyPassword } from "./Passwords.js"
import { hashSessionToken, newSessionToken } from "./SessionTokens.js"
import {
  type LoginRequest,
  LoginResponse,
  type PasswordChangeRequest,
  type RegisterRequest,
  Session,
  type SessionId,
  SessionList,
  User,
  type UserDeleteRequest
} from "./User.js"
import { type SessionRow, type UserRow, UsersRepo } from "./UsersRepo.js"

const toUser = (row: UserRow) =>
  new User({ id: row.id, email: row.email, username: row.username, created_at: row.created_at }, fromDecodedRow)

const toSession = (row: SessionRow, current: SessionId) =>
  new Session({
    id: row.id,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    user_agent: row.user_agent,
    current: row.id === current
  }, fromDecodedRow)

const invalidCredentials = new Unauthorized({ error: "Email or password is incorrect", reason: "invalid_credentials" })

// last_used_at is refreshed at most this often, so authentication is not a write per request.
const touchInterval = Duration.toMillis("1 minute")

/** A new password (register, change) must not be a common one; the schema already checked its length. */
const checkNewPassword = (field: string, password: string) => {
  if (!isCommonPassword(password)) return Effect.void
  const issues = [{ path: field, message: "is one of the 10,000 most common passwords; choose another" }]
  return Effect.fail(new InvalidInput({ error: `Invalid request: ${summarizeIssues(issues)}`, issues }))
}

const isUniqueViolation = (e: SqlError) => (e.cause as { code?: unknown } | undefined)?.code === "23505"

/** Users, passwords and session tokens. */
export class Users extends Effect.Service<Users>()("@trading-platform/core/Users", {
  scoped: Effect.gen(function*() {
    const repo = yield* UsersRepo
    const sql = yield* SqlClient.SqlClient
    const config = yield* PlatformConfig
    const params = scryptParams(config.passwords.scryptCost)
    const loginFailures = config.rateLimits.login_failures
    // Failed logins in this process's memory unless the host gave a shared store (Redis).
    const failures = yield* Effect.serviceOption(LoginFailureStore).pipe(
      Effect.flatMap(Option.match({ onNone: () => makeMemoryLoginFailureStore, onSome: Effect.succeed }))
    )
    // Checked when the email is unknown, so a login takes as long either way. Derived in the
    // background: a start does not wait the few hundred ms of scrypt for it (it was the longest wait of one).
    const decoyHash = yield* Effect.cached(hashPassword("decoy password that never matches", params))
    yield* Effect.forkScoped(decoyHash)

    const register = (input: RegisterRequest) =>
      Effect.gen(function*() {
        yield* checkNewPassword("password", input.password)
        const password_hash = yield* hashPassword(input.password, params)
        const row = yield* repo.insertUser({
          email: input.email,
          username: input.username,
          password_hash,
          now: yield* now
        })
        return toUser(row)
      }).pipe(
        Effect.catchTag("SqlError", (e) =>
          isUniqueViolation(e)
            ? Effect.gen(function*() {
              const taken = yield* repo.findUserByEmail(input.email)
              return yield* new Conflict({
                error: Option.isSome(taken) ? "Email is already registered" : "Username is already taken"
              })
            })
            : Effect.fail(e)),
        dieOnStorageFailure,
        withRequestSpan("Users.register")
      )

    // Failed logins are counted per account, known or not (so a wait says nothing about whether it exists).
    const login = (input: LoginRequest, userAgent: string | undefined) =>
      Effect.gen(function*() {
        const account = input.email.toLowerCase()
        const wait = yield* failures.waitFor(account)
        if (wait > 0) {
          const seconds = Math.ceil(wait / 1000)
          return yield* new RateLimited({
            error: `Too many failed logins for this account; retry in ${seconds} s`,
            retry_after: seconds
          })
        }
        const user = yield* repo.findUserByEmail(input.email)
        const { ok, outdated } = yield* verifyPassword(
          input.password,
          Option.isSome(user) ? user.value.password_hash : yield* decoyHash,
          params
        )
        if (Option.isNone(user) || !ok) {
          yield* failures.fail(account, loginFailures)
          return yield* invalidCredentials
        }
        yield* failures.clear(account)
        // A hash made with weaker parameters than today's is replaced while the password is at hand.
        if (outdated) {
          yield* repo.updatePassword(user.value.id, yield* hashPassword(input.password, params), yield* now)
        }
        const token = newSessionToken()
        const at = yield* now
        const session = yield* repo.insertSession({
          user_id: user.value.id,
          token_hash: hashSessionToken(token),
          user_agent: userAgent?.slice(0, 512) ?? null,
          now: at,
          expires_at: new Date(at.getTime() + Duration.toMillis(config.tokenTtl))
        })
        return new LoginResponse({
          session_token: token,
          token_type: "bearer",
          expires_at: session.expires_at,
          user: toUser(user.value)
        })
      }).pipe(dieOnStorageFailure, withRequestSpan("Users.login"))

    // Runs on every authenticated request: its span only while tracing, and without capturing the
    // caller's stack trace (that took about a quarter of authentication's CPU time).
    const authenticate = (token: string) =>
      Effect.gen(function*() {
        if (token === "") {
          return yield* new Unauthorized({ error: "A session token is required", reason: "token_missing" })
        }
        const found = yield* repo.findSessionByTokenHash(hashSessionToken(token))
        if (Option.isNone(found)) {
          return yield* new Unauthorized({ error: "The session token is not valid", reason: "token_invalid" })
        }
        const session = found.value
        if (session.revoked_at !== null) {
          return yield* new Unauthorized({
            error: "The session token was revoked; log in again",
            reason: "token_revoked"
          })
        }
        const at = yield* now
        if (Date.parse(session.expires_at) <= at.getTime()) {
          return yield* new Unauthorized({
            error: "The session token has expired; log in again",
            reason: "token_expired"
          })
        }
        if (session.last_used_at === null || at.getTime() - Date.parse(session.last_used_at) >= touchInterval) {
          yield* repo.touchSession(session.id, at)
        }
        return {
          id: session.user_id,
          email: session.email,
          username: session.username,
          created_at: session.user_created_at,
          sessionId: session.id
        } satisfies CurrentUserShape
      }).pipe(dieOnStorageFailure, withRequestSpan("Users.authenticate", { captureStackTrace: false }))

    /**
     * Authenticates many tokens together, a query per 1,000 (a process's open streams, checked again):
     * the tokens that no longer authenticate, each with the reason `authenticate` would give.
     */
    const authenticateAll = (tokens: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const refused = new Map<string, Unauthorized>()
        const at = yield* now
        for (let i = 0; i < tokens.length; i += 1000) {
          const chunk = tokens.slice(i, i + 1000)
          const found = new Map(
            (yield* repo.findSessionsByTokenHashes(chunk.map(hashSessionToken))).map((s) => [s.token_hash, s])
          )
          const touch: Array<SessionId> = []
          for (const token of chunk) {
            const session = found.get(hashSessionToken(token))
            if (token === "") {
              refused.set(token, new Unauthorized({ error: "A session token is required", reason: "token_missing" }))
            } else if (session === undefined) {
              refused.set(token, new Unauthorized({ error: "The session token is not valid", reason: "token_invalid" }))
            } else if (session.revoked_at !== null) {
              refused.set(
                token,
                new Unauthorized({ error: "The session token was revoked; log in again", reason: "token_revoked" })
              )
            } else if (Date.parse(session.expires_at) <= at.getTime()) {
              refused.set(
                token,
                new Unauthorized({ error: "The session token has expired; log in again", reason: "token_expired" })
              )
            } else if (
              session.last_used_at === null || at.getTime() - Date.parse(session.last_used_at) >= touchInterval
            ) touch.push(session.id)
          }
          if (touch.length > 0) yield* repo.touchSessions(touch, at)
        }
        return refused as ReadonlyMap<string, Unauthorized>
      }).pipe(dieOnStorageFailure, withRequestSpan("Users.authenticateAll", { attributes: { tokens: tokens.length } }))

    const logout = (caller: CurrentUserShape) =>
      Effect.flatMap(now, (at) => repo.revokeSession(caller.sessionId, at)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Users.logout", { attributes: { userId: caller.id } })
      )

    const changePassword = (caller: CurrentUserShape, input: PasswordChangeRequest) =>
      Effect.gen(function*() {
        const user = yield* repo.findUserById(caller.id)
        if (Option.isNone(user)) return yield* invalidCredentials
        if (!(yield* verifyPassword(input.current_password, user.value.password_hash, params)).ok) {
          return yield* new Unauthorized({ error: "The current password is incorrect", reason: "invalid_credentials" })
        }
        yield* checkNewPassword("new_password", input.new_password)
        const password_hash = yield* hashPassword(input.new_password, params)
        const at = yield* now
        yield* sql.withTransaction(
          Effect.zipRight(repo.updatePassword(caller.id, password_hash, at), repo.revokeAllSessions(caller.id, at))
        )
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Users.changePassword", { attributes: { userId: caller.id } })
      )

    // One statement, so one transaction: the user and everything they own go together (the
    // sessions too, which kills the token), or nothing does.
    const deleteMe = (caller: CurrentUserShape, input: UserDeleteRequest) =>
      Effect.gen(function*() {
        const user = yield* repo.findUserById(caller.id)
        if (Option.isNone(user)) return yield* invalidCredentials
        if (!(yield* verifyPassword(input.password, user.value.password_hash, params)).ok) {
          return yield* new Unauthorized({ error: "The password is incorrect", reason: "invalid_credentials" })
        }
        yield* repo.deleteUser(caller.id)
      }).pipe(dieOnStorageFailure, withRequestSpan("Users.deleteMe", { attributes: { userId: caller.id } }))

    // Authentication read the user with the session, so this needs no query of its own.
    const me = (caller: CurrentUserShape) =>
      Effect.succeed(
        new User({ id: caller.id, email: caller.email, username: caller.username, created_at: caller.created_at })
      )

    const sessions = (caller: CurrentUserShape, page: Pagination) =>
      Effect.gen(function*() {
        const rows = yield* repo.listActiveSessions({ user_id: caller.id, now: yield* now, ...pageOf(page) })
        return new SessionList({ sessions: rows.map((row) => toSession(row, caller.sessionId)) })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Users.sessions", { attributes: { userId: caller.id } })
      )

    const revokeSession = (caller: CurrentUserShape, id: SessionId) =>
      Effect.gen(function*() {
        yield* repo.findSessionById(id).pipe(ownedBy(caller, `Session ${id}`))
        yield* repo.revokeSession(id, yield* now)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Users.revokeSession", { attributes: { userId: caller.id, sessionId: id } })
      )

    /** The owner a command-line operation acts for, by e-mail (the operator runs it; no password). */
    const ownerByEmail = (email: string) =>
      repo.findUserByEmail(email).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `No user with the e-mail ${email}` })),
          onSome: (user) => Effect.succeed({ id: user.id })
        })),
        dieOnStorageFailure,
        withRequestSpan("Users.ownerByEmail")
      )

    return {
      register,
      login,
      authenticate,
      authenticateAll,
      logout,
      changePassword,
      deleteMe,
      me,
      sessions,
      revokeSession,
      ownerByEmail
    } as const
  }),
  dependencies: [UsersRepo.Default]
}) {}
