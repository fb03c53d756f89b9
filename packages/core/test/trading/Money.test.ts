import { describe, expect, it } from "@effect/vitest"
import { applyFill } from "../../src/trading/Ledger.js"
import { fromMoney, moneyText, toMoney } from "../../src/trading/Money.js"

describe("Money", () => {
  it("rounds to 10⁻⁸ and writes the exact decimal", () => {
    expect(moneyText(toMoney(0.1 + 0.2))).toBe("0.30000000")
    expect(moneyText(toMoney(-1.419e-12))).toBe("0.00000000")
    expect(moneyText(toMoney(-12.345678914))).toBe("-12.34567891")
    expect(moneyText(toMoney(123456789012.5))).toBe("123456789012.50000000")
    expect(fromMoney(toMoney(9999.99999999))).toBe(9999.99999999)
  })

  it("a position opened and closed in pieces frees exactly the margin it froze: no -1.4e-12 left behind", () => {
    let held = null as ReturnType<typeof applyFill>["position"]
    let frozen = 0n
    const fills = [
      { side: "buy", quantity: 0.3917, price: 101.37 },
      { side: "buy", quantity: 0.1, price: 99.91 },
      { side: "sell", quantity: 0.17, price: 103.3 },
      { side: "sell", quantity: 0.1234, price: 97.01 },
      { side: "sell", quantity: 0.1983, price: 100.07 }
    ] as const
    for (const fill of fills) {
      const effect = applyFill(held, { ...fill, fee: 0, leverage: 3 })
      held = effect.position
      frozen += effect.frozen
    }
    expect(held).toBeNull()
    expect(frozen).toBe(0n)
  })
})
