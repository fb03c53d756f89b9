import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url))

export interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Starts the server's entry point as `npm start` does, in its own process (as another OS user when `uid` is given). */
export const start = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  user: { uid?: number; gid?: number } = {}
): Running => {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@trading-platform/source", main, ...args], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...user
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Polls the output until `pattern` shows up, with a deadline. */
export const waitFor = async (running: Running, pattern: RegExp, deadlineMs = 60_000) => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    const match = pattern.exec(running.output())
    if (match) return match
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${pattern}; output:\n${running.output()}`)
}
