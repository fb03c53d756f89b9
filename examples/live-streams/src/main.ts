// The live streams through the Promise client, against a running server (start one with
// `npm start` at the repository root, or set TRADING_API_URL): the market-intelligence SSE stream
// as an async iterator, then a WebSocket subscription to a backtest's progress. Both reconnect by
// the retry rule on their own. Stops after the first events when EXAMPLE_EXIT is set.
import { createClient } from "@trading-platform/client"
// Node 20 has no global WebSocket; browsers and Node 22+ need no `WebSocket` option.
import WebSocket from "ws"

const baseUrl = process.env["TRADING_API_URL"] ?? "http://127.0.0.1:3000"
const once = process.env["EXAMPLE_EXIT"] !== undefined

const anonymous = createClient({ baseUrl })
const name = `live_${Date.now().toString(36)}`
const password = "correct horse battery"
const user = await anonymous.users.register({ payload: { email: `${name}@example.com`, username: name, password } })
const { session_token } = await anonymous.users.login({ payload: { email: user.email, password } })
const client = createClient({ baseUrl, token: session_token, WebSocket })

// One stream per session token: leaving the loop closes it, so the WebSocket below may open.
for await (const event of client.marketIntelligence(["BTC", "ETH"])) {
  if (event.event === "snapshot") {
    const { BTC, ETH } = event.data.prices
    console.log(`snapshot: BTC ${BTC?.price}, ETH ${ETH?.price}, ${event.data.triggers.length} recent trigger(s)`)
  } else if (event.event === "update") {
    console.log(
      event.data.kind === "price"
        ? `${event.data.symbol} ${event.data.price}`
        : event.data.kind === "risk"
        ? `account ${event.data.event.account_id} is ${event.data.event.to_mode}`
        : event.data.kind === "reconciliation"
        ? `account ${event.data.event.account_id} reconciled: ${event.data.event.message}`
        : event.data.kind === "decision"
        ? `account ${event.data.round.account_id} decided (${event.data.round.outcome}): ${event.data.round.orders.length} order(s)`
        : `trigger: ${event.data.trigger.pool_name}`
    )
  } else if (event.event === "news") {
    console.log(`news about ${event.data.symbols.join(", ")}: ${event.data.title}`)
  }
  if (once) break
}

const program = await client.programs.create({
  payload: { name: "hold", code: "export function decide() { return { operation: \"hold\" } }" }
})
const backtest = await client.backtests.submit({
  path: { id: program.id },
  payload: {
    symbol: "BTC",
    exchange: "venue1",
    timeframe: "1h",
    start: "2025-01-01T00:00:00Z",
    end: "2025-01-08T00:00:00Z",
    initial_balance: 10_000,
    fee_rate: 0.00035,
    slippage: 0.0005,
    leverage: 1
  }
})
for await (const { channel, data } of client.subscribe([`backtest:${backtest.id}`])) {
  const progress = data as { status: string; progress: number }
  console.log(`${channel}: ${progress.status} ${Math.round(progress.progress * 100)}%`)
  if (once || ["completed", "failed", "cancelled"].includes(progress.status)) break
}
