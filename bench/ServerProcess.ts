import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../packages/server/src/main.ts", import.meta.url))

/**
 * The server from its sources in a process of its own, on a free port, with only `env` (and
 * PATH) for settings; answers once it listens, with its base URL and a way to stop it.
 */
export const startServer = async (env: Record<string, string>) => {
  const server = spawn(process.execPath, [
    "--import",
    "tsx",
    "--conditions=@trading-platform/source",
    main,
    "--port",
    "0"
  ], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  server.stdout.on("data", (c) => (output += c))
  server.stderr.on("data", (c) => (output += c))
  const stop = async () => {
    server.kill("SIGTERM")
    await new Promise((resolve) => server.on("exit", resolve))
  }
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000)
      const poll = setInterval(() => {
        const match = /Listening on (http:\/\/[\d.:]+)/.exec(output)
        if (match) {
          clearInterval(poll)
          clearTimeout(deadline)
          resolve(match[1]!)
        }
      }, 50)
    })
    return { base, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
