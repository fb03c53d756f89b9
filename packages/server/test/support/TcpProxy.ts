import { connect, createServer, type Server, type Socket } from "node:net"

/**
 * A TCP proxy on a port of this machine to a real service (PostgreSQL, Redis, a venue), that a
 * test stops and starts again, like the service going away and coming back. The real service is
 * never touched; `start` listens on the same port again.
 */
export const makeTcpProxy = (target: URL, defaultPort = 5432) => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  const start = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || defaultPort), target.hostname)
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on("close", () => sockets.delete(s))
          s.on("error", () => s.destroy())
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port
        resolve()
      })
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server?.close(() => resolve())
    })
  return { start, stop, port: () => port }
}
