import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { builtinFactors, taCall } from "../../src/ranking/FactorCatalogue.js"
import { factorValue, tableBars } from "../../src/ranking/FactorTable.js"
import type { AccountState } from "../../src/sandbox/Decider.js"
import { ProgramRuntime } from "../../src/sandbox/ProgramRuntime.js"
import { QuickJsProgramRuntime } from "../../src/sandbox/QuickJsRuntime.js"
import { randomWalk } from "./ReferenceFactors.js"

const flat: AccountState = { positions: [null], balance: 10_000 }
const open = [{ floor: -Infinity, ceiling: Infinity }]
const candleFactors = builtinFactors.filter((f) => f.input.kind === "ta")

describe("factors in programs", () => {
  it.layer(QuickJsProgramRuntime())((it) => {
    it.scoped("ta's factor helpers answer in the sandbox, bit for bit, what the ranking computes", () =>
      Effect.gen(function*() {
        const candles = randomWalk(1_300, 11)
        const last = candles.at(-1)!.time
        // Every factor's ta call on data.candles (the host's values after the first piece) and on a
        // copy (computed by the sandbox itself), compared on every bar; the last bar's reported.
        const calls = candleFactors.map((f) => taCall(f)!)
        const code = `
          let differ = [], checked = 0
          export function decide(data) {
            const copy = data.candles.slice()
            const fromHost = [${calls.join(", ")}]
            const own = [${calls.map((c) => c.replace("data.candles", "copy")).join(", ")}]
            for (let i = 0; i < fromHost.length; i++) {
              checked++
              if (!Object.is(fromHost[i], own[i]) && differ.length < 5) differ.push([i, data.candles.length, fromHost[i], own[i]])
            }
            if (data.bar.time !== ${last}) return { operation: "hold" }
            return { operation: "close", reason: JSON.stringify({ fromHost, differ, checked }) }
          }`
        const runtime = yield* ProgramRuntime
        const decider = yield* runtime.load({ code, symbols: ["BTC"], timeframe: "1h", params: {}, seed: 1 })
        let reason: string | undefined
        for (let start = 0; start < candles.length; start += 500) {
          const chunk = candles.slice(start, start + 500)
          decider.chunk([chunk])
          for (let from = 0; from < chunk.length;) {
            const stop = decider.decide(from, flat, open)
            if (stop.decisions !== undefined) reason = stop.decisions[0]!.reason ?? undefined
            from = stop.decisions === undefined ? stop.index : stop.index + 1
          }
        }
        const report = JSON.parse(reason!)
        expect(report.differ).toEqual([])
        expect(report.checked).toBe(calls.length * candles.length)
        const ranking = candleFactors.map((f) =>
          factorValue(f, { symbol: "BTC", candles: candles.slice(-tableBars), market: {} })
        )
        for (const v of ranking) expect(v).toBeTypeOf("number")
        expect(report.fromHost).toEqual(ranking)
        report.fromHost.forEach((v: number, i: number) => expect(Object.is(v, ranking[i])).toBe(true))
      }))
  })
})
