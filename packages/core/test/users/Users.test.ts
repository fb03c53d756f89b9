import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { migrate, PlatformLive, type UserId, Users } from "@trading-platform/core"
import { Clock, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { hashPassword } from "../../src/users/Passwords.js"
import { UsersRepo } from "../../src/users/UsersRepo.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

let n = 0
const newUser = () => {
  const name = `repo_${process.pid}_${++n}_${Date.now() % 100000}`
  return { email: `${name}@Example.com`, username: name, password: "a long enough password" }
}

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`users storage over ${storage.name}`, () => {
    const Live = UsersRepo.Default.pipe(Layer.provideMerge(PlatformLive), Layer.provideMerge(TestConfig(storage)))
    layer(Live, { timeout: "120 seconds" })((it) => {
      it.effect("migrations are applied once; running them again changes nothing", () =>
        Effect.gen(function*() {
          expect(yield* migrate).toEqual([])
        }))

      it.effect("passwords are stored only as scrypt hashes, at the configured cost (PASSWORD_SCRYPT_COST)", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const sql = yield* SqlClient.SqlClient
          const input = newUser()
          const user = yield* users.register(input)
          const [row] = yield* sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${user.id}`
          expect(row!.password_hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]{86}==$/)
          expect(row!.password_hash).not.toContain(input.password)
        }))

      it.effect("session tokens are stored only as their SHA-256 digest", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const sql = yield* SqlClient.SqlClient
          const input = newUser()
          yield* users.register(input)
          const login = yield* users.login({ email: input.email, password: input.password }, "test-agent")
          const rows = yield* sql<Record<string, unknown>>`SELECT * FROM sessions WHERE user_id = ${login.user.id}`
          expect(rows).toHaveLength(1)
          expect(JSON.stringify(rows)).not.toContain(login.session_token)
          expect(rows[0]!["token_hash"]).toBe(createHash("sha256").update(login.session_token).digest("hex"))
        }))

      it.effect("emails match whatever their case; an email is stored as given", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const repo = yield* UsersRepo
          const input = newUser()
          const user = yield* users.register(input)
          expect(user.email).toBe(input.email)
          const found = yield* repo.findUserByEmail(input.email.toLowerCase())
          expect(Option.map(found, (u) => u.id)).toEqual(Option.some(user.id))
          const login = yield* users.login({ email: input.email.toUpperCase(), password: input.password }, undefined)
          expect(login.user.id).toBe(user.id)
        }))

      it.effect("active sessions exclude revoked and expired tokens", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const repo = yield* UsersRepo
          const input = newUser()
          const user = yield* users.register(input)
          const a = yield* users.login(input, undefined)
          const b = yield* users.login(input, undefined)
          const caller = yield* users.authenticate(b.session_token)
          yield* users.revokeSession(caller, (yield* users.authenticate(a.session_token)).sessionId)
          const now = new Date(yield* Clock.currentTimeMillis)
          const active = yield* repo.listActiveSessions({ user_id: user.id as UserId, now, limit: 50, offset: 0 })
          expect(active.map((s) => s.id)).toEqual([caller.sessionId])
          const later = new Date(Date.parse(b.expires_at) + 1)
          expect(yield* repo.listActiveSessions({ user_id: user.id as UserId, now: later, limit: 50, offset: 0 }))
            .toEqual([])
          yield* repo.revokeAllSessions(user.id as UserId, now)
          expect(yield* repo.listActiveSessions({ user_id: user.id as UserId, now, limit: 50, offset: 0 })).toEqual([])
        }))

      it.effect("authenticateAll answers, in one query, the tokens authenticate refuses, with its reasons", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const input = newUser()
          yield* users.register(input)
          const [valid, revoked, other] = [
            yield* users.login(input, undefined),
            yield* users.login(input, undefined),
            yield* users.login(input, undefined)
          ]
          yield* users.logout(yield* users.authenticate(revoked.session_token))
          const tokens = [valid.session_token, revoked.session_token, other.session_token, "tps_unknown", ""]
          const refused = yield* users.authenticateAll(tokens)
          for (const token of tokens) {
            const one = yield* Effect.flip(users.authenticate(token)).pipe(Effect.option)
            expect(Option.getOrUndefined(Option.map(one, (e) => e.reason)), token).toBe(refused.get(token)?.reason)
          }
          expect([...refused.keys()].sort()).toEqual(["", revoked.session_token, "tps_unknown"].sort())
        }))

      it.effect("a duplicate registered concurrently is refused by the database, not only by a check", () =>
        Effect.gen(function*() {
          const users = yield* Users
          const input = newUser()
          const results = yield* Effect.all([users.register(input), users.register(input)], {
            concurrency: 2,
            mode: "either"
          })
          expect(results.filter((r) => r._tag === "Right")).toHaveLength(1)
          const failed = results.find((r) => r._tag === "Left")
          expect(failed?._tag === "Left" && failed.left._tag).toBe("Conflict")
        }))
    })
  })
}

describe("password hashes at OWASP's cost (the default)", () => {
  const Live = UsersRepo.Default.pipe(
    Layer.provideMerge(PlatformLive),
    Layer.provideMerge(TestConfig(testStorages[0], { passwords: { scryptCost: 2 ** 17 } }))
  )
  const hashOf = (id: UserId) =>
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${id}`
    ).pipe(
      Effect.map(([row]) => row!.password_hash)
    )

  layer(Live, { timeout: "120 seconds" })((it) => {
    it.effect("a new password is hashed with scrypt N=2^17, r=8, p=1, the parameters kept in the hash", () =>
      Effect.gen(function*() {
        const user = yield* (yield* Users).register(newUser())
        expect(yield* hashOf(user.id)).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]{86}==$/)
      }))

    it.effect(
      "a hash of the old format (N=2^14) logs in, even with a password the policy would refuse now, and is re-hashed at N=2^17",
      () =>
        Effect.gen(function*() {
          const users = yield* Users
          const repo = yield* UsersRepo
          const input = { ...newUser(), password: "old-pw1!" }
          const old = yield* hashPassword(input.password, { N: 16384, r: 8, p: 1 })
          const row = yield* repo.insertUser({ ...input, password_hash: old, now: new Date(0) })
          // A wrong password changes nothing.
          const wrong = yield* users.login({ email: input.email, password: "not it" }, undefined).pipe(Effect.flip)
          expect(wrong._tag).toBe("Unauthorized")
          expect(yield* hashOf(row.id)).toBe(old)

          const login = yield* users.login({ email: input.email, password: input.password }, undefined)
          expect(login.user.id).toBe(row.id)
          const upgraded = yield* hashOf(row.id)
          expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/)
          // The new hash holds the same password, and is not re-hashed again.
          expect((yield* users.login({ email: input.email, password: input.password }, undefined)).user.id).toBe(row.id)
          expect(yield* hashOf(row.id)).toBe(upgraded)
        })
    )
  })
})
