import { Data, Effect, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { PlatformConfig, type PlatformOptions } from "../config/PlatformConfig.js"

/** The fewest characters a key (`SECRET_KEY` or `DATA_DIR/secret.key`) may have. */
export const minimumSecretKeyLength = 32

/** The key for secrets at rest is missing its substance (empty or short); the platform does not start. */
export class SecretKeyInvalid extends Data.TaggedError("SecretKeyInvalid")<{ readonly message: string }> {}

/** Where a sealed value is stored: it opens only there, so a value copied to another row does not. */
export interface SealedAt {
  readonly table: string
  readonly column: string
  /** The row's key, e.g. its id. */
  readonly row: string
}

const tooShort = (where: string, length: number, remedy: string) =>
  new SecretKeyInvalid({
    message: `${where} holds ${length} characters, fewer than the ${minimumSecretKeyLength} a key for secrets at ` +
      `rest needs: ${remedy}.`
  })

/**
 * The key material: `SECRET_KEY`, else a key generated once into the data directory (mode 0600),
 * else (in-memory storage, which keeps nothing) a key for this process only.
 */
const keyMaterial = (options: PlatformOptions): string => {
  if (Option.isSome(options.secretKey)) {
    const key = Redacted.value(options.secretKey.value)
    if (key.length < minimumSecretKeyLength) throw tooShort("SECRET_KEY", key.length, "give a longer one")
    return key
  }
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
  const key = readFileSync(file, "utf8").trim()
  if (key.length < minimumSecretKeyLength) {
    throw tooShort(
      `The key file ${file}`,
      key.length,
      "put the key back, or delete the file to have a new one generated (values sealed before no longer open)"
    )
  }
  return key
}

/**
 * AES-256-GCM for secrets at rest (api keys, wallet keys), base64 parts:
 * `v2:<iv>:<tag>:<ciphertext>` under a key derived with HKDF-SHA256, bound to where it is stored
 * (table, column and row as additional data). `v1` values (the SHA-256 of the key material, not
 * bound) still open; they become `v2` when next written.
 */
export class Secrets extends Effect.Service<Secrets>()("@trading-platform/core/Secrets", {
  effect: Effect.gen(function*() {
    const options = yield* PlatformConfig
    const material = yield* Effect.try({ try: () => keyMaterial(options), catch: (e) => e }).pipe(
      Effect.catchIf((e) => !(e instanceof SecretKeyInvalid), Effect.die),
      Effect.mapError((e) => e as SecretKeyInvalid)
    )
    const keys = {
      v1: createHash("sha256").update(material).digest(),
      v2: Buffer.from(hkdfSync("sha256", material, "trading-platform/secrets", "aes-256-gcm v2", 32))
    }
    const additionalData = (at: SealedAt) => Buffer.from(`${at.table}.${at.column}:${at.row}`, "utf8")

    const seal = (plain: string, at: SealedAt): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", keys.v2, iv)
      cipher.setAAD(additionalData(at))
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return ["v2", iv.toString("base64"), cipher.getAuthTag().toString("base64"), data.toString("base64")].join(":")
    }

    /** A value that does not open (another key, another row, tampering) is a defect: the data is not usable. */
    const open = (sealed: string, at: SealedAt): string => {
      const [v, iv, tag, data] = sealed.split(":")
      if ((v !== "v1" && v !== "v2") || iv === undefined || tag === undefined || data === undefined) {
        throw new Error("unsupported secret format")
      }
      const decipher = createDecipheriv("aes-256-gcm", keys[v], Buffer.from(iv, "base64"))
      if (v === "v2") decipher.setAAD(additionalData(at))
      decipher.setAuthTag(Buffer.from(tag, "base64"))
      return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8")
    }

    return { seal, open } as const
  })
}) {}
