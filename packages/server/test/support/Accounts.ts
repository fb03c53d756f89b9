import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "./TestServer.js"

/** Creates an account for the user's token; answers the created Account. */
export const createAccount = (token: string, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/api/account", { token, body: { name: "Momentum bot", ...body } })
    expect(reply.status).toBe(201)
    return reply.body
  })

/** A well-formed venue1 wallet. */
export const wallet = {
  environment: "testnet",
  wallet_address: `0x${"ab".repeat(20)}`,
  private_key: `0x${"5e".repeat(32)}`
} as const

/** Well-formed venue2 keys. */
export const venue2Keys = {
  environment: "testnet",
  api_key: "AK0123456789abcdefXYZ",
  secret_key: "SK0123456789abcdefSECRETVALUE"
} as const
