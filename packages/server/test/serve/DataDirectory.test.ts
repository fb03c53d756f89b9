import { describe, expect, it } from "@effect/vitest"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { type Running, start, waitFor } from "../support/ServerProcess.js"
import { uniqueUser } from "../support/TestServer.js"

const listening = async (running: Running) => (await waitFor(running, /Listening on (http:\/\/[\d.:]+)/))[1]!

const post = (base: string, path: string, body: unknown) =>
  fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const stop = async (running: Running) => {
  running.child.kill("SIGTERM")
  return running.exited
}

/** Every folder and file under `dir` (itself included) whose mode is not owner-only. */
const notOwnerOnly = (dir: string): Array<string> => {
  const wrong: Array<string> = []
  const walk = (path: string) => {
    const stat = statSync(path)
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== 0o700) wrong.push(`${path} ${(stat.mode & 0o777).toString(8)}`)
      for (const name of readdirSync(path)) walk(join(path, name))
    } else if ((stat.mode & 0o777) !== 0o600) wrong.push(`${path} ${(stat.mode & 0o777).toString(8)}`)
  }
  walk(dir)
  return wrong
}

const withDataDir = async (body: (dataDir: string) => Promise<void>) => {
  const parent = mkdtempSync(join(tmpdir(), "tp-datadir-"))
  try {
    await body(join(parent, "data"))
  } finally {
    rmSync(parent, { recursive: true, force: true })
  }
}

describe("the embedded data directory", () => {
  it(
    "a second server on the same DATA_DIR refuses to start, naming the folder and the running process; the first is unaffected",
    { timeout: 120_000 },
    () =>
      withDataDir(async (dataDir) => {
        const first = start(["--port", "0"], { DATA_DIR: dataDir })
        const base = await listening(first)
        expect(readFileSync(join(dataDir, "server.lock"), "utf8").trim()).toBe(String(first.child.pid))

        const second = start(["--port", "0"], { DATA_DIR: dataDir })
        expect(await second.exited).toBe(1)
        expect(second.output()).toContain(`The data directory ${dataDir} is in use by process ${first.child.pid}`)
        expect(second.output()).not.toContain("Listening")

        const user = uniqueUser("lock")
        expect((await post(base, "/api/users/register", user)).status).toBe(201)
        expect(await stop(first)).toBe(0)
        expect(existsSync(join(dataDir, "server.lock"))).toBe(false)

        // Released on shutdown: the next server starts and has the user.
        const third = start(["--port", "0"], { DATA_DIR: dataDir })
        const base3 = await listening(third)
        expect((await post(base3, "/api/users/login", { email: user.email, password: user.password })).status).toBe(200)
        expect(await stop(third)).toBe(0)
      })
  )

  it("after the holder is killed with SIGKILL, the next server recovers the stale lock and starts with the data", {
    timeout: 120_000
  }, () =>
    withDataDir(async (dataDir) => {
      const first = start(["--port", "0"], { DATA_DIR: dataDir })
      const base = await listening(first)
      const user = uniqueUser("kill")
      expect((await post(base, "/api/users/register", user)).status).toBe(201)
      first.child.kill("SIGKILL")
      await first.exited
      expect(readFileSync(join(dataDir, "server.lock"), "utf8").trim()).toBe(String(first.child.pid))

      const next = start(["--port", "0"], { DATA_DIR: dataDir })
      const base2 = await listening(next)
      expect(readFileSync(join(dataDir, "server.lock"), "utf8").trim()).toBe(String(next.child.pid))
      expect((await post(base2, "/api/users/login", { email: user.email, password: user.password })).status).toBe(200)
      expect(await stop(next)).toBe(0)
    }))

  it("a new folder is created 0700 and everything in it is 0600 while the server runs and after it stops", {
    timeout: 120_000
  }, () =>
    withDataDir(async (dataDir) => {
      const server = start(["--port", "0"], { DATA_DIR: dataDir })
      await listening(server)
      expect(notOwnerOnly(dataDir)).toEqual([])
      expect(await stop(server)).toBe(0)
      expect(notOwnerOnly(dataDir)).toEqual([])
    }))

  it(
    "an existing world-readable folder with world-writable files is tightened at start",
    { timeout: 120_000 },
    () =>
      withDataDir(async (dataDir) => {
        mkdirSync(join(dataDir, "base"), { recursive: true, mode: 0o777 })
        chmodSync(dataDir, 0o755)
        chmodSync(join(dataDir, "base"), 0o777)
        writeFileSync(join(dataDir, "base", "note"), "x", { mode: 0o666 })
        chmodSync(join(dataDir, "base", "note"), 0o666)
        const server = start(["--port", "0"], { DATA_DIR: dataDir })
        await listening(server)
        expect(notOwnerOnly(dataDir)).toEqual([])
        expect(await stop(server)).toBe(0)
      })
  )

  it(
    "refuses to start, naming the folder, when the database cannot be created in it",
    { timeout: 120_000 },
    () =>
      withDataDir(async (dataDir) => {
        // PostgreSQL's `global` folder is a file here: creating the cluster (in a process of its own) fails.
        mkdirSync(dataDir, { recursive: true })
        writeFileSync(join(dataDir, "global"), "x")
        const server = start(["--port", "0"], { DATA_DIR: dataDir })
        expect(await server.exited).toBe(1)
        expect(server.output()).toContain(`Storage failed to start: PGlite failed to create a database in ${dataDir}`)
        expect(server.output()).not.toContain("Listening")
      })
  )

  // Only root can run a process as another user, which is what makes chmod fail.
  it.runIf(process.getuid?.() === 0)("refuses to start, naming the folder, when it cannot restrict its permissions", {
    timeout: 120_000
  }, () =>
    withDataDir(async (dataDir) => {
      // The folder is root's, reachable and even writable by the server's user, but not its to chmod.
      mkdirSync(dataDir, { recursive: true })
      chmodSync(dirname(dataDir), 0o755)
      chmodSync(dataDir, 0o777)
      const server = start(["--port", "0"], { DATA_DIR: dataDir, HOME: tmpdir() }, { uid: 65534, gid: 65534 })
      expect(await server.exited).toBe(1)
      expect(server.output()).toContain(`Cannot restrict the data directory ${dataDir} to its owner (mode 0700)`)
      expect(server.output()).not.toContain("Listening")
    }))
})
