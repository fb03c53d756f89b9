// The Promise client against a running server (start one with `npm start` at the repository root,
// or set TRADING_API_URL). To show retries, it talks through a small local proxy that answers the
// first request with 503 Service Unavailable; the client waits and tries again.
import { createClient, TradingApiError } from "@trading-platform/client"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const baseUrl = process.env["TRADING_API_URL"] ?? "http://127.0.0.1:3000"

let requests = 0
const flakyProxy = createServer(async (request, response) => {
  if (++requests === 1) return response.writeHead(503, { "content-type": "application/json" }).end("{}")
  const upstream = await fetch(baseUrl + request.url, { method: request.method ?? "GET" })
  response.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text())
})
await new Promise<void>((listening) => flakyProxy.listen(0, "127.0.0.1", listening))

// Retries 5xx and 429 by the platform's rule; here 3 attempts at most, the first wait 200 ms.
const viaProxy = createClient({
  baseUrl: `http://127.0.0.1:${(flakyProxy.address() as AddressInfo).port}`,
  retry: { maxAttempts: 3, base: "200 millis" }
})
const health = await viaProxy.health()
console.log(`health: ${health.status} after ${requests} requests (the first answered 503)`)
flakyProxy.close()

const anonymous = createClient({ baseUrl })
const name = `promise_${Date.now().toString(36)}`
const password = "correct horse battery"
const user = await anonymous.users.register({ payload: { email: `${name}@example.com`, username: name, password } })
const { session_token } = await anonymous.users.login({ payload: { email: user.email, password } })
const client = createClient({ baseUrl, token: session_token })
const sessions = await client.users.sessions({ urlParams: { limit: 10, offset: 0 } })
console.log(`signed in as ${(await client.users.me()).username} with ${sessions.sessions.length} session(s)`)

// Every failure rejects with TradingApiError: status, code, request_id and retry_after (for 429).
try {
  await anonymous.users.me()
} catch (error) {
  if (!(error instanceof TradingApiError)) throw error
  console.log(
    `users.me without a token: ${error.status} ${error.code} "${error.message}" (request ${error.request_id})`
  )
}
