import { createHash, randomBytes } from "node:crypto"

/** A new session token: 32 random bytes, base64url, with a prefix that secret scanners can spot. */
export const newSessionToken = (): string => `tps_${randomBytes(32).toString("base64url")}`

/** Tokens are stored only as this digest. */
export const hashSessionToken = (token: string): string => createHash("sha256").update(token).digest("hex")
