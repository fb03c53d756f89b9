import { describe, expect, it } from "@effect/vitest"
import { bytesToHex } from "@noble/hashes/utils.js"
import { actionHash, l1Digest, recoverAddress, signL1Action, toWire } from "../../src/venues/Venue1Signing.js"

// Test vectors from venue1's own Python SDK (tests/signing_test.py).
const key = "0x0123456789012345678901234567890123456789012345678901234567890123"
const order = (asset: number, sz: number, px: number, tif: string) => ({
  type: "order",
  orders: [{ a: asset, b: true, p: toWire(px), s: toWire(sz), r: false, t: { limit: { tif } } }],
  grouping: "na"
})

describe("venue1 action signing", () => {
  it("hashes an order as the venue does", () => {
    expect(bytesToHex(actionHash(order(4, 0.0147, 1670.1, "Ioc"), 1677777606040))).toBe(
      "0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908"
    )
  })

  it("signs an order for mainnet and testnet exactly as the SDK does", () => {
    const action = order(1, 100, 100, "Gtc")
    expect(signL1Action(action, 0, key, true)).toEqual({
      r: "0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e",
      s: "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e",
      v: 28
    })
    expect(signL1Action(action, 0, key, false)).toEqual({
      r: "0x82b2ba28e76b3d761093aaded1b1cdad4960b3af30212b343fb2e6cdfa4e3d54",
      s: "0x6b53878fc99d26047f4d7e8c90eb98955a109f44209163f52d8dc4278cbbd9f5",
      v: 27
    })
  })

  it("signs other actions (scheduleCancel) as the SDK does, and the signer can be recovered", () => {
    const action = { type: "scheduleCancel", time: 123456789 }
    const signature = signL1Action(action, 0, key, true)
    expect(signature).toEqual({
      r: "0x609cb20c737945d070716dcc696ba030e9976fcf5edad87afa7d877493109d55",
      s: "0x16c685d63b5c7a04512d73f183b3d7a00da5406ff1f8aad33f8ae2163bab758b",
      v: 28
    })
    const signer = recoverAddress(l1Digest(action, 0, true), signature)
    expect(signer).toMatch(/^0x[0-9a-f]{40}$/)
    expect(recoverAddress(l1Digest(action, 1, true), signature)).not.toBe(signer)
  })

  it("writes numbers with at most 8 decimals and no trailing zeros", () => {
    expect([toWire(100), toWire(0.0147), toWire(1670.1), toWire(-0), toWire(0.000000011)]).toEqual([
      "100",
      "0.0147",
      "1670.1",
      "0",
      "0.00000001"
    ])
  })
})
