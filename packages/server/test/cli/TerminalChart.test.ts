import { describe, expect, it } from "@effect/vitest"
import { lineChart, progressBar, table } from "../../src/cli/TerminalChart.js"

describe("terminal drawing", () => {
  it("a progress bar fills in proportion and shows the percentage", () => {
    expect(progressBar(0, 10)).toBe("[----------]   0%")
    expect(progressBar(0.5, 10)).toBe("[#####-----]  50%")
    expect(progressBar(1, 10)).toBe("[##########] 100%")
  })

  it("a table aligns labels left and values right", () => {
    expect(table([["Trades", "17"], ["Final balance", "9961.22"]])).toBe(
      `Trades${" ".repeat(14)}17\nFinal balance  9961.22`
    )
  })

  it("a line chart puts each column's point on its row, the extremes on the top and bottom rows", () => {
    const chart = lineChart([1, 2, 3, 2, 1], 5, 3).split("\n")
    expect(chart).toEqual(["3.00 |  *  ", "     | * * ", "1.00 |*   *"])
  })

  it("a long series is thinned to the width, keeping its last value", () => {
    const values = Array.from({ length: 1000 }, (_, i) => i)
    const chart = lineChart(values, 20, 4).split("\n")
    expect(chart.every((row) => row.split("|")[1]!.length === 20)).toBe(true)
    expect(chart[0]!.endsWith("*")).toBe(true)
    expect(chart[0]!.startsWith("999.00")).toBe(true)
  })
})
