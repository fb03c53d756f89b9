// The platform inside a host's own node:http server: the host sends /api/ to it and serves the rest,
// and hands it the WebSocket upgrades (GET /api/ws). `npm start` keeps serving on PORT (3001); with
// EXAMPLE_EXIT=1 it takes a free port, shows a few requests and exits.
import { makeNodeHandler } from "@trading-platform/server"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

// Storage and limits come from the environment (DATA_DIR, DATABASE_URL, ...), as for `npm start`.
const platform = await makeNodeHandler()

const server = createServer((request, response) => {
  if (request.url?.startsWith("/api/")) return platform.handler(request, response)
  response.writeHead(200, { "content-type": "text/plain" }).end("Hello from the host")
})
// WebSockets (GET /api/ws) come as "upgrade" events, which a request handler never sees.
server.on("upgrade", platform.upgrade)

const demo = process.env["EXAMPLE_EXIT"] === "1"
server.listen(demo ? 0 : Number(process.env["PORT"] ?? 3001), "127.0.0.1", async () => {
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  console.log(`Host on ${base}; the platform answers under ${base}/api/`)
  if (!demo) return
  const health = await fetch(`${base}/api/health`)
  console.log(`GET /api/health -> ${health.status} ${await health.text()}`)
  const unknown = await fetch(`${base}/api/nothing-here`)
  console.log(`GET /api/nothing-here -> ${unknown.status} ${(await unknown.json()).code}`)
  const page = await fetch(`${base}/`)
  console.log(`GET / -> ${page.status} ${await page.text()}`)
  // The platform first: it ends its open streams, which the server's close would wait for.
  await platform.dispose()
  server.close()
})
