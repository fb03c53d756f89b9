import { describe, expect, it } from "@effect/vitest"
import { toSignificant } from "../../src/stats/Significant.js"

/** A seeded stream of doubles in [0, 1). */
const uniforms = (seed: number) => {
  let state = seed
  return () => {
    state = (state * 48271) % 2147483647
    return state / 2147483647
  }
}

const text = (x: number, digits: number) => Number(x.toPrecision(digits))

describe("toSignificant", () => {
  it("answers the double toPrecision's text reads as, bit for bit, over every magnitude and digit count", () => {
    const next = uniforms(12345)
    const wrong: Array<string> = []
    for (let i = 0; i < 200_000; i++) {
      const digits = 1 + Math.floor(next() * 15)
      // Mantissas across [1, 10), exponents from 10^-30 to 10^30, both signs.
      const x = (next() < 0.5 ? -1 : 1) * (1 + 9 * next()) * 10 ** Math.floor(next() * 61 - 30)
      if (!Object.is(toSignificant(x, digits), text(x, digits))) wrong.push(`${x} at ${digits}`)
    }
    expect(wrong).toEqual([])
  })

  it("agrees at ties, next to ties, at powers of ten and at the doubles around them", () => {
    const wrong: Array<string> = []
    const around = (x: number) => {
      const view = new DataView(new ArrayBuffer(8))
      view.setFloat64(0, x)
      const bits = view.getBigUint64(0)
      return [-2n, -1n, 0n, 1n, 2n].map((d) => {
        view.setBigUint64(0, bits + d)
        return view.getFloat64(0)
      })
    }
    const next = uniforms(777)
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + Math.floor(next() * 15)
      const exponent = Math.floor(next() * 41 - 20)
      const n = Math.floor(next() * 9 * 10 ** (digits - 1)) + 10 ** (digits - 1)
      // A decimal tie (n.5 in the last place) and a power of ten, and the doubles next to each.
      const candidates = [...around((n + 0.5) * 10 ** (exponent - digits)), ...around(10 ** exponent)]
      for (const x of candidates) {
        if (!Object.is(toSignificant(x, digits), text(x, digits))) wrong.push(`${x} at ${digits}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("answers 0 for either zero, and what the text reads for NaN and the infinities", () => {
    expect(Object.is(toSignificant(-0, 8), 0)).toBe(true)
    expect(toSignificant(0, 8)).toBe(0)
    expect(toSignificant(NaN, 8)).toBeNaN()
    expect(toSignificant(Infinity, 8)).toBe(Infinity)
    expect(toSignificant(-Infinity, 8)).toBe(-Infinity)
    expect(toSignificant(Number.MIN_VALUE, 8)).toBe(text(Number.MIN_VALUE, 8))
    expect(toSignificant(Number.MAX_VALUE, 15)).toBe(text(Number.MAX_VALUE, 15))
  })
})
