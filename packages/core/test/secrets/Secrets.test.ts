import { describe, expect, it } from "@effect/vitest"
import { PlatformConfig, type PlatformOptions, Secrets } from "@trading-platform/core"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { testOptions } from "../support/TestStorage.js"

const secretsWith = (options: PlatformOptions) =>
  Effect.provide(Secrets, Secrets.Default.pipe(Layer.provide(PlatformConfig.layer(options))))

describe("Secrets", () => {
  it.effect("seals with AES-256-GCM: a fresh IV each time, and only the same key opens it", () =>
    Effect.gen(function*() {
      const options = testOptions({ kind: "pglite", dataDir: "memory://" })
      const secrets = yield* secretsWith(options)
      const a = secrets.seal("0xprivate")
      const b = secrets.seal("0xprivate")
      expect(a).not.toBe(b)
      expect(a).not.toContain("0xprivate")
      expect(secrets.open(a)).toBe("0xprivate")
      // Flip one bit of the ciphertext: the tag no longer matches.
      const [v, iv, tag, data] = a.split(":")
      const flipped = Buffer.from(data!, "base64")
      flipped.writeUInt8(flipped.readUInt8(0) ^ 1, 0)
      const tampered = [v, iv, tag, flipped.toString("base64")].join(":")
      expect(() => secrets.open(tampered)).toThrow()
      const other = yield* secretsWith({ ...options, secretKey: Option.none() })
      expect(() => other.open(a)).toThrow()
    }))

  it.effect("without SECRET_KEY, embedded mode generates one key file with mode 0600 and reuses it", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "tp-secrets-"))
      const options = { ...testOptions({ kind: "pglite", dataDir }), secretKey: Option.none() }
      const sealed = (yield* secretsWith(options)).seal("api-key")
      const file = join(dataDir, "secret.key")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readFileSync(file, "utf8")).toMatch(/^[0-9a-f]{64}$/)
      // A restart reads the same key back.
      expect((yield* secretsWith(options)).open(sealed)).toBe("api-key")
    }))
})
