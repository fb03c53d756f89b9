import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { start, waitFor } from "../support/ServerProcess.js"
import { uniqueUser } from "../support/TestServer.js"

const post = (base: string, path: string, body: unknown) =>
  fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

describe("the server entry point (npm start)", () => {
  it("--help lists every setting and exits 0", { timeout: 60_000 }, async () => {
    const run = start(["--help"], {})
    expect(await run.exited).toBe(0)
    for (
      const name of [
        "PORT",
        "HOST",
        "DATA_DIR",
        "DATABASE_URL",
        "REDIS_URL",
        "TOKEN_TTL_DAYS",
        "TRUST_PROXY",
        "LOG_LEVEL"
      ]
    ) {
      expect(run.output()).toContain(name)
    }
  })

  it("an unknown flag exits 2 and names it", { timeout: 60_000 }, async () => {
    const run = start(["--colour", "blue"], {})
    expect(await run.exited).toBe(2)
    expect(run.output()).toContain("--colour")
  })

  it("invalid configuration stops the server with a message naming the variable", { timeout: 60_000 }, async () => {
    for (
      const [env, name] of [
        [{ PORT: "abc" }, "PORT"],
        [{ RATE_LIMIT_READ_PER_MIN: "0" }, "RATE_LIMIT_READ_PER_MIN"],
        [{ TRUST_PROXY: "perhaps" }, "TRUST_PROXY"],
        [{ LOG_LEVEL: "Loud" }, "LOG_LEVEL"]
      ] as const
    ) {
      const run = start([], { DATA_DIR: "memory://", ...env })
      expect(await run.exited, name).toBe(1)
      expect(run.output()).toMatch(new RegExp(`Invalid configuration.*${name}`))
    }
    const flag = start(["--token-ttl-days=-3"], { DATA_DIR: "memory://" })
    expect(await flag.exited).toBe(1)
    expect(flag.output()).toMatch(/Invalid configuration.*TOKEN_TTL_DAYS/)
  })

  // A short key is refused the same way (Secrets.test.ts); one start shows the message reaching the user.
  it("an empty DATA_DIR/secret.key stops the server with one sentence saying so", { timeout: 90_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tp-key-"))
    const file = join(dataDir, "secret.key")
    writeFileSync(file, "", { mode: 0o600 })
    const run = start(["--port", "0"], { DATA_DIR: dataDir })
    expect(await run.exited).toBe(1)
    expect(run.output().trim()).toBe(
      `The key file ${file} holds 0 characters, fewer than the 32 a key for secrets at rest needs: put the key ` +
        "back, or delete the file to have a new one generated (values sealed before no longer open)."
    )
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("--version prints the version and exits 0", { timeout: 60_000 }, async () => {
    const run = start(["--version"], {})
    expect(await run.exited).toBe(0)
    expect(run.output().trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it(
    "says at start where the API, its reference and the data are, and where programs run",
    { timeout: 60_000 },
    async () => {
      const run = start(["--port", "0"], { DATA_DIR: "memory://" })
      const [, api, docs] = await waitFor(run, /API (http:\/\/[\d.:]+\/api\/), reference (http:\/\/[\d.:]+\/docs)/)
      await waitFor(run, /Data: in memory/)
      await waitFor(run, /Programs run in V8 isolates/)
      expect((await fetch(api!)).status).toBe(200)
      expect(docs).toBe(api!.replace("/api/", "/docs"))
      run.child.kill("SIGTERM")
      expect(await run.exited).toBe(0)
      // QuickJS when asked for, without a warning.
      const quickJs = start(["--port", "0", "--sandbox-runtime", "quickjs"], { DATA_DIR: "memory://" })
      await waitFor(quickJs, /Programs run in QuickJS/)
      expect(quickJs.output()).not.toContain("SandboxRuntimeWarning")
      quickJs.child.kill("SIGTERM")
      expect(await quickJs.exited).toBe(0)
    }
  )

  it("logs when a shutdown starts (with its signal) and when it has finished, with how long it took", {
    timeout: 60_000
  }, async () => {
    const run = start(["--port", "0"], { DATA_DIR: "memory://", LOG_LEVEL: "Debug" })
    await waitFor(run, /Listening on/)
    run.child.kill("SIGTERM")
    expect(await run.exited).toBe(0)
    const log = run.output()
    const starting = log.indexOf("Shutting down on SIGTERM: finishing the requests in flight (at most 15 s)")
    const closed = log.indexOf("Embedded database closed")
    expect(starting).toBeGreaterThan(-1)
    expect(closed).toBeGreaterThan(starting)
    // The last line, once the database is closed too.
    expect(log.trim().split("\n").at(-1)).toMatch(/Shut down in \d+(ms|s)/)
  })

  it(
    "a configuration error is one plain sentence naming the variable, given as flag or variable",
    { timeout: 60_000 },
    async () => {
      for (const [args, env] of [[["--port=abc"], {}], [[], { PORT: "abc" }]] as const) {
        const run = start(args, { DATA_DIR: "memory://", ...env })
        expect(await run.exited).toBe(1)
        expect(run.output().trim()).toBe("Invalid configuration: PORT must be an integer value; got 'abc'")
      }
    }
  )

  it("on SIGTERM finishes the request in flight, closes the database and exits 0; the data is there after a restart", {
    timeout: 120_000
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tp-serve-"))
    try {
      const first = start(["--port", "0"], { DATA_DIR: dataDir, LOG_LEVEL: "Debug" })
      const base = (await waitFor(first, /Listening on (http:\/\/[\d.:]+)/))[1]!
      const user = uniqueUser("serve")
      expect((await post(base, "/api/users/register", user)).status).toBe(201)

      // A login whose body arrives in two parts, with SIGTERM in between.
      const body = JSON.stringify({ email: user.email, password: user.password })
      const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = request(`${base}/api/users/login`, {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
        }, (res) => {
          let text = ""
          res.on("data", (chunk) => (text += chunk))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        })
        req.on("error", reject)
        req.write(body.slice(0, 10))
        setTimeout(() => {
          first.child.kill("SIGTERM")
          setTimeout(() => req.end(body.slice(10)), 300)
        }, 200)
      })
      const reply = await answered
      expect(reply.status).toBe(200)
      expect(reply.body.session_token).toMatch(/^tps_/)
      expect(await first.exited).toBe(0)
      expect(first.output()).toContain("Embedded database closed")

      const second = start(["--port", "0"], { DATA_DIR: dataDir })
      const base2 = (await waitFor(second, /Listening on (http:\/\/[\d.:]+)/))[1]!
      const login = await post(base2, "/api/users/login", { email: user.email, password: user.password })
      expect(login.status).toBe(200)
      const me = await fetch(`${base2}/api/users/me`, {
        headers: { authorization: `Bearer ${reply.body.session_token}` }
      })
      expect(me.status).toBe(200)
      second.child.kill("SIGTERM")
      expect(await second.exited).toBe(0)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
