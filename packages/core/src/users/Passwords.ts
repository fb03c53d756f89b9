import { Effect } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { owaspScryptCost } from "../config/PlatformConfig.js"
import { commonPasswordList } from "./common-passwords/CommonPasswords.js"

/** scrypt's parameters: cost N (a power of two), block size r and parallelism p. */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** The parameters of new hashes: the configured cost (OWASP's N=2^17 by default), r=8, p=1. */
export const scryptParams = (cost: number = owaspScryptCost): ScryptParams => ({ N: cost, r: 8, p: 1 })

/** The fewest characters a new password may have. */
export const minPasswordLength = 10

const keyLength = 64

// scrypt needs about 128·N·r bytes; Node refuses above `maxmem` (32 MiB by default), so it is set
// to twice that, for the parameters of the hash at hand (an older hash may have other ones).
const derive = (password: string, salt: Buffer, params: ScryptParams) =>
  Effect.async<Buffer>((resume) => {
    scrypt(
      password.normalize("NFKC"),
      salt,
      keyLength,
      { ...params, maxmem: 256 * params.N * params.r },
      (err, key) => resume(err ? Effect.die(err) : Effect.succeed(key))
    )
  })

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64: the parameters travel with each hash. */
export const hashPassword = (password: string, params: ScryptParams) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, params)
    return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

const parse = (stored: string) => {
  const [scheme, N, r, p, salt, hash] = stored.split("$")
  const params = { N: Number(N), r: Number(r), p: Number(p) }
  const valid = scheme === "scrypt" && salt !== undefined && hash !== undefined &&
    Object.values(params).every((n) => Number.isSafeInteger(n) && n > 0)
  return valid ? { params, salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") } : undefined
}

/**
 * Whether `password` matches `stored`, and whether `stored` was made with weaker parameters than
 * `current` (so the caller re-hashes it while it has the password in hand).
 */
export const verifyPassword = (password: string, stored: string, current: ScryptParams) =>
  Effect.gen(function*() {
    const parsed = parse(stored)
    if (parsed === undefined) return { ok: false, outdated: false }
    const key = yield* derive(password, parsed.salt, parsed.params)
    const ok = key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash)
    const { N, p, r } = parsed.params
    return { ok, outdated: N < current.N || r < current.r || p < current.p }
  })

const commonPasswords = new Set(commonPasswordList.split("\n").map((line) => line.toLowerCase()))

/** Whether `password` is one of the 10,000 most common passwords (without regard to case). */
export const isCommonPassword = (password: string) => commonPasswords.has(password.normalize("NFKC").toLowerCase())
