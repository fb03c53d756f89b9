import { describe, expect, it } from "@effect/vitest"
import { parseTemplate, renderTemplate } from "../../src/aitraders/PromptTemplate.js"
import { builtinDecisions, type SymbolFacts } from "../../src/aitraders/TraderModel.js"

const facts = (over: Partial<SymbolFacts>): SymbolFacts => ({
  symbol: "BTC",
  price: 110,
  sma_20: 100,
  ema_20: 101,
  rsi_14: 60,
  atr_14: 2,
  position: null,
  ...over
})

describe("the built-in model", () => {
  it("buys a fifth of the balance in an uptrend that is not overbought, with a stop two ATRs away and a target three", () => {
    expect(builtinDecisions([facts({})]).decisions[0]).toMatchObject({
      operation: "buy",
      symbol: "BTC",
      target_portion_of_balance: 0.2,
      leverage: 1,
      stop_loss_price: 106,
      take_profit_price: 116
    })
  })

  it("sells short in a downtrend that is not oversold, and holds when stretched or without a trend", () => {
    expect(builtinDecisions([facts({ price: 90, rsi_14: 40 })]).decisions[0]).toMatchObject({
      operation: "sell",
      stop_loss_price: 94,
      take_profit_price: 84
    })
    expect(builtinDecisions([facts({ rsi_14: 75 })]).decisions[0]!.operation).toBe("hold")
    expect(builtinDecisions([facts({ price: 100.5 })]).decisions[0]!.operation).toBe("hold")
    expect(builtinDecisions([facts({ sma_20: null })]).decisions[0]).toMatchObject({
      operation: "hold",
      reason: "Not enough candles to read a trend: holding."
    })
  })

  it("closes a position against the trend and keeps one with it; the same facts give the same answer", () => {
    expect(builtinDecisions([facts({ price: 90, position: { side: "long", size: 1 } })]).decisions[0]!.operation)
      .toBe("close")
    expect(builtinDecisions([facts({ position: { side: "long", size: 1 } })]).decisions[0]!.operation).toBe("hold")
    expect(builtinDecisions([facts({ position: { side: "short", size: 1 } })]).decisions[0]!.operation).toBe("close")
    expect(builtinDecisions([facts({}), facts({ symbol: "ETH" })])).toEqual(
      builtinDecisions([facts({}), facts({ symbol: "ETH" })])
    )
  })
})

describe("prompt templates", () => {
  it("name variables as {name} or {candles:SYMBOL:TIMEFRAME:COUNT}; other braces are text", () => {
    expect(parseTemplate(`Answer {"decisions": []} for {symbols} with {candles:btc:4h:20}`)).toEqual({
      variables: [
        { _tag: "Simple", name: "symbols" },
        { _tag: "Candles", symbol: "BTC", timeframe: "4h", count: 20 }
      ],
      errors: []
    })
    expect(parseTemplate("{position} {candles:BTC:1h:201} {candles:BTC:3h:5}").errors).toEqual([
      "{position} is not a variable (GET /api/ai/prompt-variables lists them)",
      "{candles:BTC:1h:201}: the count must be a whole number from 1 to 200",
      "{candles:BTC:3h:5}: the timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d"
    ])
  })

  it("render each variable once per place it is named, leaving text braces alone", () => {
    const text = renderTemplate(
      `{"x": 1} {time} {time} {candles:ETH:1h:2}`,
      (v) => v._tag === "Simple" ? "T" : `[${v.symbol}]`
    )
    expect(text).toBe(`{"x": 1} T T [ETH]`)
  })
})
