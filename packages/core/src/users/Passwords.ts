import { Effect } from "effect"
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from "node:crypto"

// scrypt parameters (N=2^14, r=8, p=1: OWASP's minimum), stored with each hash so they can change later.
const params = { N: 16384, r: 8, p: 1 } as const
const keyLength = 64

const derive = (password: string, salt: Buffer, options: ScryptOptions) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, keyLength, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      resume(err ? Effect.die(err) : Effect.succeed(key)))
  })

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export const hashPassword = (password: string) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, params)
    return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function*() {
    const [scheme, N, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || !salt || !hash) return false
    const expected = Buffer.from(hash, "base64")
    const key = yield* derive(password, Buffer.from(salt, "base64"), { N: Number(N), r: Number(r), p: Number(p) })
    return key.length === expected.length && timingSafeEqual(key, expected)
  })
