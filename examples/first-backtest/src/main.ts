// A first backtest with the Promise client: sign up, store a program, run it over two weeks of
// hourly BTC candles with a progress line, and print its metrics. Start a server first
// (`npm start` at the repository root) or set TRADING_API_URL.
import { createClient } from "@trading-platform/client"

const baseUrl = process.env["TRADING_API_URL"] ?? "http://127.0.0.1:3000"

const anonymous = createClient({ baseUrl })
const name = `first_${Date.now().toString(36)}`
const password = "correct horse battery"
const user = await anonymous.users.register({ payload: { email: `${name}@example.com`, username: name, password } })
const { session_token } = await anonymous.users.login({ payload: { email: user.email, password } })
const client = createClient({ baseUrl, token: session_token })

// Long above the 20-bar average of the closes, flat below it.
const code = `export function decide(data) {
  const closes = data.candles.map((c) => c.close)
  if (closes.length < 20) return { operation: "hold" }
  const average = closes.slice(-20).reduce((a, b) => a + b, 0) / 20
  if (!data.position && data.bar.close > average) return { operation: "buy", target_portion_of_balance: 0.5 }
  if (data.position && data.bar.close < average) return { operation: "close" }
  return { operation: "hold" }
}`
const program = await client.programs.create({ payload: { name: "Above the 20-bar average", code } })

// Only what the API requires: exchange, balance, fees, slippage and leverage take their defaults.
let backtest = await client.backtests.submit({
  path: { id: program.id },
  payload: { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-15T00:00:00Z" }
})
while (backtest.status === "queued" || backtest.status === "running") {
  process.stdout.write(`backtest ${backtest.id}: ${backtest.status} ${Math.round(backtest.progress * 100)}%\r`)
  await new Promise((resolve) => setTimeout(resolve, 250))
  backtest = await client.backtests.get({ path: { id: backtest.id } })
}
process.stdout.write("\n")
if (backtest.status !== "completed" || backtest.metrics === null) {
  throw new Error(`backtest ${backtest.id} ${backtest.status}: ${backtest.error}`)
}
const m = backtest.metrics
console.log(
  `completed: ${m.total_trades} trades, pnl ${m.total_pnl.toFixed(2)} (${m.total_pnl_percent.toFixed(2)}%), ` +
    `win rate ${(m.win_rate * 100).toFixed(0)}%, max drawdown ${m.max_drawdown_percent.toFixed(2)}%, sharpe ${
      m.sharpe.toFixed(2)
    }`
)
