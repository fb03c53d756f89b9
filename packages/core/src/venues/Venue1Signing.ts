import { secp256k1 } from "@noble/curves/secp256k1.js"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { Packr } from "msgpackr"

// The venue hashes the action as msgpack with minimal map headers, as Python's msgpack writes it.
const packr = new Packr({ useRecords: false, variableMapSize: true })

const uint256 = (n: number) => {
  const out = new Uint8Array(32)
  new DataView(out.buffer).setBigUint64(24, BigInt(n))
  return out
}
const hashText = (s: string) => keccak_256(utf8ToBytes(s))

// Derived at the first signature, not when the module loads: hashing them there cost every server start ~15 ms.
let typeHashes: { readonly domainSeparator: Uint8Array; readonly agentType: Uint8Array } | undefined
const eip712 = () =>
  typeHashes ??= {
    domainSeparator: keccak_256(concatBytes(
      hashText("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
      hashText("Exchange"),
      hashText("1"),
      uint256(1337),
      new Uint8Array(32)
    )),
    agentType: hashText("Agent(string source,bytes32 connectionId)")
  }

/** The action's hash with its nonce (no vault): the phantom agent's `connectionId`. */
export const actionHash = (action: unknown, nonce: number): Uint8Array => {
  const tail = new Uint8Array(9)
  new DataView(tail.buffer).setBigUint64(0, BigInt(nonce))
  return keccak_256(concatBytes(new Uint8Array(packr.pack(action)), tail))
}

/** The EIP-712 digest of the phantom agent `{source, connectionId}` that venue1 verifies. */
export const l1Digest = (action: unknown, nonce: number, mainnet: boolean): Uint8Array => {
  const { agentType, domainSeparator } = eip712()
  return keccak_256(concatBytes(
    Uint8Array.of(0x19, 0x01),
    domainSeparator,
    keccak_256(concatBytes(agentType, hashText(mainnet ? "a" : "b"), actionHash(action, nonce)))
  ))
}

export interface L1Signature {
  readonly r: string
  readonly s: string
  readonly v: number
}

/** Signs an `/exchange` action as venue1's own SDK does. */
export const signL1Action = (action: unknown, nonce: number, privateKey: string, mainnet: boolean): L1Signature => {
  const signature = secp256k1.sign(l1Digest(action, nonce, mainnet), hexToBytes(privateKey.replace(/^0x/, "")))
  return { r: `0x${signature.r.toString(16)}`, s: `0x${signature.s.toString(16)}`, v: 27 + signature.recovery }
}

/** The address that made a signature over the digest. */
export const recoverAddress = (digest: Uint8Array, signature: L1Signature): string => {
  const publicKey = new secp256k1.Signature(BigInt(signature.r), BigInt(signature.s))
    .addRecoveryBit(signature.v - 27)
    .recoverPublicKey(digest)
    .toRawBytes(false)
  return `0x${bytesToHex(keccak_256(publicKey.subarray(1)).subarray(12))}`
}

/** A number as venue1 writes it on the wire: at most 8 decimals, no trailing zeros. */
export const toWire = (x: number): string => {
  const fixed = x.toFixed(8).replace(/\.?0+$/, "")
  return fixed === "-0" ? "0" : fixed
}
