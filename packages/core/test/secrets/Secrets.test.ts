import { describe, expect, it } from "@effect/vitest"
import { PlatformConfig, type PlatformOptions, type SealedAt, Secrets } from "@trading-platform/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { testOptions } from "../support/TestStorage.js"

const secretsWith = (options: PlatformOptions) =>
  Effect.provide(Secrets, Secrets.Default.pipe(Layer.provide(PlatformConfig.layer(options))))

const at: SealedAt = { table: "venue_credentials", column: "secret_sealed", row: "7/venue1" }

// Sealed by the version before v2 under testOptions' key ("test-secret-key-0123456789abcdef0123456789").
const sealedByV1 = "v1:ejMrGelyGDxdWH46:K8sOTpU3G8pkCTLxNVIOfA==:znOKmUUo0m6I2CGrx3aV+aDQ"

describe("Secrets", () => {
  it.effect("seals with AES-256-GCM: a fresh IV each time, and only the same key opens it", () =>
    Effect.gen(function*() {
      const options = testOptions({ kind: "pglite", dataDir: "memory://" })
      const secrets = yield* secretsWith(options)
      const a = secrets.seal("0xprivate", at)
      const b = secrets.seal("0xprivate", at)
      expect(a).not.toBe(b)
      expect(a).not.toContain("0xprivate")
      expect(a.startsWith("v2:")).toBe(true)
      expect(secrets.open(a, at)).toBe("0xprivate")
      // Flip one bit of the ciphertext: the tag no longer matches.
      const [v, iv, tag, data] = a.split(":")
      const flipped = Buffer.from(data!, "base64")
      flipped.writeUInt8(flipped.readUInt8(0) ^ 1, 0)
      const tampered = [v, iv, tag, flipped.toString("base64")].join(":")
      expect(() => secrets.open(tampered, at)).toThrow()
      const other = yield* secretsWith({ ...options, secretKey: Option.none() })
      expect(() => other.open(a, at)).toThrow()
    }))

  it.effect("a sealed value moved to another row, column or table does not open", () =>
    Effect.gen(function*() {
      const secrets = yield* secretsWith(testOptions({ kind: "pglite", dataDir: "memory://" }))
      const sealed = secrets.seal("0xprivate", at)
      expect(() => secrets.open(sealed, { ...at, row: "8/venue1" })).toThrow()
      expect(() => secrets.open(sealed, { ...at, row: "7/venue2" })).toThrow()
      expect(() => secrets.open(sealed, { ...at, column: "public_id" })).toThrow()
      expect(() => secrets.open(sealed, { table: "accounts", column: "api_key_sealed", row: "7" })).toThrow()
      expect(secrets.open(sealed, at)).toBe("0xprivate")
    }))

  it.effect("a value sealed in the v1 format still opens, wherever it is stored", () =>
    Effect.gen(function*() {
      const secrets = yield* secretsWith(testOptions({ kind: "pglite", dataDir: "memory://" }))
      expect(secrets.open(sealedByV1, at)).toBe("0xsealed-before-v2")
      expect(secrets.open(sealedByV1, { ...at, row: "8/venue1" })).toBe("0xsealed-before-v2")
    }))

  it.effect("without SECRET_KEY, embedded mode generates one key file with mode 0600 and reuses it", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "tp-secrets-"))
      const options = { ...testOptions({ kind: "pglite", dataDir }), secretKey: Option.none() }
      const sealed = (yield* secretsWith(options)).seal("api-key", at)
      const file = join(dataDir, "secret.key")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readFileSync(file, "utf8")).toMatch(/^[0-9a-f]{64}$/)
      // A restart reads the same key back.
      expect((yield* secretsWith(options)).open(sealed, at)).toBe("api-key")
    }))

  it.effect("an empty or short key file is refused, never used", () =>
    Effect.gen(function*() {
      for (const [content, length] of [["", 0], ["\n", 0], ["0123456789abcdef0123456789abcde", 31]] as const) {
        const dataDir = mkdtempSync(join(tmpdir(), "tp-secrets-"))
        const file = join(dataDir, "secret.key")
        writeFileSync(file, content, { mode: 0o600 })
        const error = yield* Effect.flip(
          secretsWith({ ...testOptions({ kind: "pglite", dataDir }), secretKey: Option.none() })
        )
        expect(error._tag).toBe("SecretKeyInvalid")
        expect(error.message).toBe(
          `The key file ${file} holds ${length} characters, fewer than the 32 a key for secrets at rest needs: ` +
            "put the key back, or delete the file to have a new one generated (values sealed before no longer open)."
        )
        // The file is left as it was, for its owner to mend.
        expect(readFileSync(file, "utf8")).toBe(content)
      }
    }))

  it.effect("a short SECRET_KEY given directly (by an embedding host) is refused too", () =>
    Effect.gen(function*() {
      const options = {
        ...testOptions({ kind: "pglite", dataDir: "memory://" }),
        secretKey: Option.some(Redacted.make(""))
      }
      const error = yield* Effect.flip(secretsWith(options))
      expect(error.message).toBe(
        "SECRET_KEY holds 0 characters, fewer than the 32 a key for secrets at rest needs: give a longer one."
      )
    }))
})
