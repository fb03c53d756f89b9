// The platform inside an Express 5 app, under the prefix /trading, WebSockets (/trading/api/ws)
// included. `npm start` keeps serving on PORT (3002); with EXAMPLE_EXIT=1 it takes a free port,
// shows a few requests and exits.
import { makeNodeHandler } from "@trading-platform/server"
import express from "express"
import type { AddressInfo } from "node:net"

const platform = await makeNodeHandler()
const app = express()

// Mounted before any body parser, which would consume the body the platform reads itself.
// Express strips the prefix, so the platform sees /api/... as usual.
app.use("/trading", (request, response) => platform.handler(request, response))

// The host's own routes, with its own body parser.
app.use(express.json())
app.post("/echo", (request, response) => {
  response.json({ host: "express", received: request.body })
})

const demo = process.env["EXAMPLE_EXIT"] === "1"
const server = app.listen(demo ? 0 : Number(process.env["PORT"] ?? 3002), "127.0.0.1", async () => {
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  console.log(`Express on ${base}; the platform answers under ${base}/trading/api/`)
  if (!demo) return
  const json = { "content-type": "application/json" }
  const name = `express_${Date.now().toString(36)}`
  const registered = await fetch(`${base}/trading/api/users/register`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: `${name}@example.com`, username: name, password: "correct horse battery" })
  })
  console.log(`POST /trading/api/users/register -> ${registered.status} ${(await registered.json()).username}`)
  const me = await fetch(`${base}/trading/api/users/me`)
  console.log(`GET /trading/api/users/me without a token -> ${me.status} ${(await me.json()).code}`)
  const echo = await fetch(`${base}/echo`, { method: "POST", headers: json, body: JSON.stringify({ hello: "host" }) })
  console.log(`POST /echo -> ${echo.status} ${JSON.stringify(await echo.json())}`)
  // The platform first: it ends its open streams, which the server's close would wait for.
  await platform.dispose()
  server.close()
})

// WebSocket upgrades never pass through Express's routing: strip the prefix as app.use does.
server.on("upgrade", (request, socket, head) => {
  if (!request.url?.startsWith("/trading/")) return socket.destroy()
  request.url = request.url.slice("/trading".length)
  platform.upgrade(request, socket, head)
})
