import { describe, expect, it } from "@effect/vitest"
import { PlatformLive, StorageStats, Users } from "@trading-platform/core"
import { TestConfig, testStorages } from "@trading-platform/core/testing"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { tradingProgram } from "../support/Backtests.js"

const cli = fileURLToPath(new URL("../../src/cli/Main.ts", import.meta.url))

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `trading-platform ...args` as `npx trading-platform` would, in its own process. */
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<Outcome>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@trading-platform/source", cli, ...args], {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

const withTemp = async (body: (dir: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "tp-cli-"))
  try {
    await body(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const range = ["--symbol", "BTC", "--timeframe", "1h", "--from", "2025-01-01T00:00:00Z", "--to", "2025-01-15T00:00:00Z"]

describe("trading-platform command line", () => {
  it("an unknown command or flag prints the usage and exits 2", async () => {
    const unknown = await run(["frobnicate"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/Unknown command frobnicate[\s\S]*Usage: trading-platform <command>/)
    const badFlag = await run(["backtest", "--bogus", "1"])
    expect(badFlag.code).toBe(2)
    expect(badFlag.stderr).toMatch(/--bogus[\s\S]*Usage: /)
    const missing = await run(["backtest", "--symbol", "BTC"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--program is required/)
  }, 60_000)

  it("backtest --help prints the usage and exits 0", async () => {
    const help = await run(["backtest", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/--program FILE/)
  }, 60_000)

  it("runs a backtest embedded on a data directory and prints it as JSON with --json", async () => {
    await withTemp(async (dir) => {
      writeFileSync(join(dir, "program.js"), tradingProgram)
      const out = await run([
        "backtest",
        "--program",
        join(dir, "program.js"),
        ...range,
        "--data-dir",
        join(dir, "data"),
        "--json"
      ])
      expect(out.stderr).toBe("")
      expect(out.code).toBe(0)
      const backtest = JSON.parse(out.stdout)
      expect(backtest).toMatchObject({ status: "completed", symbol: "BTC", timeframe: "1h", progress: 1, error: null })
      expect(backtest.equity_curve).toHaveLength(14 * 24)
      expect(backtest.trades.length).toBeGreaterThan(0)
      expect(backtest.metrics.total_trades).toBe(backtest.trades.length)
    })
  }, 120_000)

  it("prints a summary table and the equity curve drawn in the terminal", async () => {
    await withTemp(async (dir) => {
      writeFileSync(join(dir, "program.js"), tradingProgram)
      const out = await run(["backtest", "--program", join(dir, "program.js"), ...range])
      expect(out.code).toBe(0)
      expect(out.stdout).toMatch(/^Backtest of BTC 1h on venue1/)
      expect(out.stdout).toMatch(/Final balance\s+\d+\.\d\d/)
      expect(out.stdout).toMatch(/Trades\s+[1-9]\d*/)
      const chart = out.stdout.slice(out.stdout.indexOf("Equity\n") + 7).split("\n").filter((l) => l.includes("|"))
      expect(chart).toHaveLength(10)
      // A curve that moves has a point on the top row and one on the bottom row.
      expect(chart[0]).toContain("*")
      expect(chart[9]).toContain("*")
    })
  }, 120_000)

  it("fails with the API's message and exit 1 when the backtest cannot run", async () => {
    await withTemp(async (dir) => {
      writeFileSync(join(dir, "program.js"), tradingProgram)
      const unknown = await run([
        "backtest",
        "--program",
        join(dir, "program.js"),
        ...range.slice(2),
        "--symbol",
        "NOPE"
      ])
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toMatch(/Not listed on venue1: NOPE/)
      const badRange = await run([
        "backtest",
        "--program",
        join(dir, "program.js"),
        "--symbol",
        "BTC",
        "--from",
        "2025-02-01T00:00:00Z",
        "--to",
        "2025-01-01T00:00:00Z"
      ])
      expect(badRange.code).toBe(1)
      expect(badRange.stderr).toMatch(/end must be after start/)
      const missingFile = await run(["backtest", "--program", join(dir, "absent.js"), ...range])
      expect(missingFile.code).toBe(1)
      expect(missingFile.stderr).toMatch(/ENOENT/)
    })
  }, 120_000)

  it("migrate brings a data directory to the current schema", async () => {
    await withTemp(async (dir) => {
      const out = await run(["migrate", "--data-dir", join(dir, "data")])
      expect(out.stderr).toBe("")
      expect(out.code).toBe(0)
      expect(out.stdout).toMatch(/Database schema is current: \d+ migrations/)
    })
  }, 60_000)

  it("openapi prints the document that docs/openapi.json holds, or writes it with --out", async () => {
    const committed = readFileSync(fileURLToPath(new URL("../../../../docs/openapi.json", import.meta.url)), "utf8")
    const out = await run(["openapi"])
    expect(out.code).toBe(0)
    expect(out.stdout).toBe(committed)
    await withTemp(async (dir) => {
      const written = await run(["openapi", "--out", join(dir, "openapi.json")])
      expect(written.code).toBe(0)
      expect(readFileSync(join(dir, "openapi.json"), "utf8")).toBe(committed)
    })
  }, 60_000)

  it(
    "import candles reads CSV files into a user's dataset, reports bad rows by line, and refuses bad usage",
    async () => {
      await withTemp(async (dir) => {
        const data = join(dir, "data")
        // The dataset's owner: a user registered in the data directory beforehand.
        await Effect.runPromise(
          Effect.flatMap(
            Users,
            (users) => users.register({ email: "ada@example.com", username: "ada", password: "correct horse" })
          ).pipe(
            Effect.provide(
              PlatformLive.pipe(
                Layer.provide(
                  TestConfig({ ...testStorages[0]!, storage: Effect.succeed({ kind: "pglite", dataDir: data }) })
                )
              )
            )
          )
        )
        const hour = 3_600_000
        const start = Date.parse("2025-01-01T00:00:00Z")
        const rows = Array.from({ length: 24 }, (_, i) => `${start + i * hour},100,102,99,101,${i + 1}`)
        rows[5] = `${start + 5 * hour},100,99,98,101,6`
        writeFileSync(join(dir, "btc.csv"), `time,open,high,low,close,volume\n${rows.join("\n")}\n`)
        const flags = ["--user", "ada@example.com", "--name", "btc", "--symbol", "BTC", "--timeframe", "1h"]
        const out = await run(["import", "candles", join(dir, "btc.csv"), ...flags, "--data-dir", data, "--json"])
        expect(out.stderr).toBe("")
        expect(out.code).toBe(0)
        const result = JSON.parse(out.stdout)
        expect(result).toMatchObject({ imported: 23, rejected: 1, dataset: { name: "btc", bars: 23, symbol: "BTC" } })
        expect(result.problems).toEqual([{ file: "btc.csv", line: 7, message: expect.stringContaining("High 99") }])
        const stranger = await run([
          "import",
          "candles",
          join(dir, "btc.csv"),
          ...flags.slice(2),
          "--user",
          "bob@example.com",
          "--data-dir",
          data
        ])
        expect(stranger.code).toBe(1)
        expect(stranger.stderr).toContain("No user with the e-mail bob@example.com")
        const badTimeframe = await run(["import", "candles", join(dir, "btc.csv"), ...flags, "--timeframe", "2h"])
        expect(badTimeframe.code).toBe(1)
        expect(badTimeframe.stderr.trim()).toBe("--timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'")
        expect((await run(["import", "candles", ...flags])).code).toBe(2)
        expect((await run(["import", "rows", join(dir, "btc.csv"), ...flags])).code).toBe(2)
      })
    },
    120_000
  )

  it(
    "operator grant EMAIL makes a user an operator, who may read platform-wide figures; revoke takes it back; list lists them",
    async () => {
      await withTemp(async (dir) => {
        const data = join(dir, "data")
        const platform = PlatformLive.pipe(
          Layer.provide(TestConfig({ ...testStorages[0]!, storage: Effect.succeed({ kind: "pglite", dataDir: data }) }))
        )
        // Whether ada, logged in, may read storage-stats (the check the endpoint makes).
        const adaReadsStats = () =>
          Effect.runPromise(
            Effect.gen(function*() {
              const users = yield* Users
              const login = yield* users.login({ email: "ada@example.com", password: "correct horse" }, undefined)
              const caller = yield* users.authenticate(login.session_token)
              const read = yield* (yield* StorageStats).read(caller).pipe(Effect.either)
              return read._tag === "Right" ? "allowed" : read.left._tag
            }).pipe(Effect.provide(platform))
          )
        await Effect.runPromise(
          Effect.flatMap(
            Users,
            (users) => users.register({ email: "ada@example.com", username: "ada", password: "correct horse" })
          ).pipe(Effect.provide(platform))
        )
        expect(await adaReadsStats()).toBe("Forbidden")

        const granted = await run(["operator", "grant", "Ada@Example.com", "--data-dir", data])
        expect(granted.stderr).toBe("")
        expect(granted.code).toBe(0)
        expect(await adaReadsStats()).toBe("allowed")
        const listed = await run(["operator", "list", "--data-dir", data], { OPERATOR_EMAILS: "ops@example.com" })
        expect(listed.code).toBe(0)
        expect(listed.stdout.trim().split("\n")).toEqual(["ada@example.com", "ops@example.com (OPERATOR_EMAILS)"])

        const revoked = await run(["operator", "revoke", "ada@example.com", "--data-dir", data])
        expect(revoked.code).toBe(0)
        expect(await adaReadsStats()).toBe("Forbidden")

        const stranger = await run(["operator", "grant", "bob@example.com", "--data-dir", data])
        expect(stranger.code).toBe(1)
        expect(stranger.stderr).toContain("No user with the e-mail bob@example.com")
        expect((await run(["operator", "grant"])).code).toBe(2)
        expect((await run(["operator", "promote", "ada@example.com"])).code).toBe(2)
      })
    },
    120_000
  )

  it("serve is the default command and still answers --version", async () => {
    const version = await run(["serve", "--version"])
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const bad = await run(["--no-such-flag"])
    expect(bad.code).toBe(2)
  }, 60_000)
})
