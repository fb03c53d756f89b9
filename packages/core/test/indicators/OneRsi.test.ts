import { describe, expect, it, layer } from "@effect/vitest"
import { PlatformLive } from "@trading-platform/core"
import { Effect, Layer, TestClock } from "effect"
import { AssistantToolkit } from "../../src/assistant/AssistantTools.js"
import { gatherFacts } from "../../src/assistant/InsightWorkers.js"
import { hostTa } from "../../src/indicators/TaSource.js"
import { MarketData } from "../../src/market/MarketData.js"
import { Rankings } from "../../src/ranking/Rankings.js"
import { candleWindow } from "../../src/sandbox/SandboxLimits.js"
import { CurrentUser } from "../../src/users/Authentication.js"
import { newCaller } from "../support/Callers.js"
import { TestConfig } from "../support/TestStorage.js"

// Issue 28: market data, the assistant, insights, the ranking and programs all read RSI from `ta`.

/**
 * 14 changes of +2, -1, ... (average gain 1, average loss 0.5), then +3. Wilder: gain (1·13 + 3)/14 = 8/7,
 * loss 0.5·13/14 = 13/28, RS 32/13, RSI 100 - 100·13/45 = 640/9. A plain average of the last 14
 * changes (gains 15, losses 7) would say 100 - 100·7/22 ≈ 68.18 instead.
 */
const closes = [100, 102, 101, 103, 102, 104, 103, 105, 104, 106, 105, 107, 106, 108, 107, 110]

describe("the ta helpers' RSI", () => {
  it("is Wilder's: a 14-bar series checked by hand, on closes or on candles alike", () => {
    expect(hostTa.rsi(closes, 14)).toBeCloseTo(640 / 9, 10)
    const candles = closes.map((close, i) => ({ time: i, open: close, high: close, low: close, close, volume: 1 }))
    expect(hostTa.rsi(candles, 14)).toBe(hostTa.rsi(closes, 14))
    // One change too few: no value, not a guess.
    expect(hostTa.rsi(closes.slice(0, 14), 14)).toBeNull()
  })
})

const now = Date.parse("2026-03-01T12:34:56.000Z")

describe("RSI(14) of one symbol", () => {
  layer(PlatformLive.pipe(Layer.provideMerge(TestConfig())), { timeout: "120 seconds" })((it) => {
    it.effect("is one number in market data, the assistant's get_indicators, an insight's facts and the ranking", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now)
        const user = yield* newCaller("rsi")
        const market = yield* MarketData
        const job = { user_id: user.id, symbol: "BTC", exchange: "venue1", timeframe: "4h" } as const

        // What a program's `data.candles` holds at this bar: the last 500 closed bars.
        const window = yield* market.latest({ _tag: "Venue", exchange: "venue1" }, "BTC", "4h", candleWindow)
        expect(window.length).toBe(candleWindow)
        const expected = hostTa.rsi(window, 14) as number
        expect(expected).toEqual(expect.any(Number))

        // Market data answers the same, whatever number of candles it is asked for.
        for (const limit of [20, 100, 500]) {
          const data = yield* market.query({ symbols: ["BTC"], timeframe: "4h", limit, indicators: ["rsi"] })
          expect(data.symbols["BTC"]!.klines.length).toBe(limit)
          expect(data.symbols["BTC"]!.indicators["rsi"]).toBe(expected)
        }

        const toolkit = yield* AssistantToolkit
        const tool = yield* toolkit.handle("get_indicators", { symbols: ["BTC"], timeframe: "4h" }).pipe(
          Effect.provideService(CurrentUser, user)
        )
        expect("symbols" in tool.result && tool.result.symbols["BTC"]!.rsi_14).toBe(expected)

        const facts = yield* gatherFacts(job)
        expect(facts.rsi_14).toBe(expected)

        const table = yield* (yield* Rankings).table({ timeframe: "4h", exchange: "venue1", limit: 500 })
        expect(table.rows.find((r) => r.symbol === "BTC")!.factors["rsi_14"]).toBe(expected)
        // The insight's ranking row is that table's.
        expect(facts.ranking?.row.factors["rsi_14"]).toBe(expected)
      }))
  })
})
