import { Effect, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { PlatformConfig, type PlatformOptions } from "../config/PlatformConfig.js"

const version = "v1"

/**
 * The key material: `SECRET_KEY`, else a key generated once into the data directory (mode 0600),
 * else (in-memory storage, which keeps nothing) a key for this process only.
 */
const keyMaterial = (options: PlatformOptions): string => {
  if (Option.isSome(options.secretKey)) return Redacted.value(options.secretKey.value)
  if (options.storage.kind === "postgres") throw new Error("SECRET_KEY is required when DATABASE_URL is set")
  if (options.storage.dataDir.startsWith("memory://")) return randomBytes(32).toString("hex")
  mkdirSync(options.storage.dataDir, { recursive: true })
  const file = join(options.storage.dataDir, "secret.key")
  try {
    writeFileSync(file, randomBytes(32).toString("hex"), { flag: "wx", mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
  }
  // The umask may have widened the mode of a file created before this version.
  chmodSync(file, 0o600)
  return readFileSync(file, "utf8").trim()
}

/** AES-256-GCM for secrets at rest (api keys, wallet keys): `v1:<iv>:<tag>:<ciphertext>`, base64. */
export class Secrets extends Effect.Service<Secrets>()("@trading-platform/core/Secrets", {
  effect: Effect.gen(function*() {
    const options = yield* PlatformConfig
    const key = createHash("sha256").update(yield* Effect.try(() => keyMaterial(options)).pipe(Effect.orDie)).digest()

    const seal = (plain: string): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return [version, iv.toString("base64"), cipher.getAuthTag().toString("base64"), data.toString("base64")].join(":")
    }

    /** A value that does not open (another key, tampering) is a defect: the data is not usable. */
    const open = (sealed: string): string => {
      const [v, iv, tag, data] = sealed.split(":")
      if (v !== version || iv === undefined || tag === undefined || data === undefined) {
        throw new Error("unsupported secret format")
      }
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"))
      decipher.setAuthTag(Buffer.from(tag, "base64"))
      return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8")
    }

    return { seal, open } as const
  })
}) {}
