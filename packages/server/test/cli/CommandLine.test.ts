import { describe, expect, it } from "@effect/vitest"
import { PlatformLive, StorageStats, Users } from "@trading-platform/core"
import { TestConfig, testStorages } from "@trading-platform/core/testing"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll } from "vitest"
import { tradingProgram } from "../support/Backtests.js"

const cli = fileURLToPath(new URL("../../src/cli/Main.ts", import.meta.url))

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Loaded before the command: records every module the process resolves into the file `LOAD_PROBE`
 * names, so a test can tell that the embedded database, the migrations or the sandbox never loaded.
 */
const probeDir = mkdtempSync(join(tmpdir(), "tp-cli-probe-"))
afterAll(() => rmSync(probeDir, { recursive: true, force: true }))
writeFileSync(
  join(probeDir, "hooks.mjs"),
  [
    "import { appendFileSync } from \"node:fs\"",
    "export async function resolve(specifier, context, next) {",
    "  const resolved = await next(specifier, context)",
    "  if (process.env.LOAD_PROBE) appendFileSync(process.env.LOAD_PROBE, resolved.url + \"\\n\")",
    "  return resolved",
    "}"
  ].join("\n")
)
writeFileSync(
  join(probeDir, "probe.mjs"),
  `import { register } from "node:module"\nregister(${
    JSON.stringify(pathToFileURL(join(probeDir, "hooks.mjs")).href)
  })\n`
)
const loadProbe = pathToFileURL(join(probeDir, "probe.mjs")).href

/** Runs `trading-platform ...args` as `npx trading-platform` would, in its own process. */
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<Outcome>((resolve) => {
    const child = spawn(process.execPath, [
      "--import",
      loadProbe,
      "--import",
      "tsx",
      "--conditions=@trading-platform/source",
      cli,
      ...args
    ], {
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

/** What a process loaded, by the probe above: whether any of the embedded database, the migrations or the sandbox. */
const startedStorage = (probe: string) =>
  readFileSync(probe, "utf8").split("\n").filter((url) =>
    /@electric-sql\/pglite|quickjs|\/sql\/(Migrations|PgliteClient|Database)\.|\/Platform\./.test(url)
  )

describe("trading-platform command line", () => {
  it("an unknown command prints the commands and exits 2", async () => {
    const unknown = await run(["frobnicate"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/Unknown command frobnicate[\s\S]*Usage: trading-platform <command>/)
  }, 60_000)

  it(
    "a wrong flag is answered in one line and exit 2, before the database, its migrations or the sandbox load",
    async () => {
      await withTemp(async (dir) => {
        writeFileSync(join(dir, "program.js"), tradingProgram)
        const data = join(dir, "data")
        const flags = ["--program", join(dir, "program.js"), ...range, "--data-dir", data]
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
          [[...flags, "--bogus", "1"], "--bogus is not a flag of backtest; its flags are --program, --symbol,"],
          [
            [...flags.slice(0, 4), "--timeframe", "2h", ...flags.slice(6)],
            "--timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'"
          ],
          [
            [...flags.slice(0, 6), "--from", "soon", ...flags.slice(8)],
            "--from must be an ISO-8601 date and time; got 'soon'"
          ],
          [[...flags, "--leverage", "x2"], "--leverage must be a number; got 'x2'"],
          [flags.slice(2), "--program is required"]
        ]
        for (const [i, [args, expected]] of cases.entries()) {
          const probe = join(dir, `probe-${i}`)
          const out = await run(["backtest", ...args], { LOAD_PROBE: probe })
          expect(out.code).toBe(2)
          expect(out.stdout).toBe("")
          expect(out.stderr.split("\n")).toHaveLength(2)
          expect(out.stderr.startsWith(expected)).toBe(true)
          expect(startedStorage(probe)).toEqual([])
          expect(existsSync(data)).toBe(false)
        }
      })
    },
    120_000
  )

  it("backtest --help prints its flags and exits 0, loading neither the contract nor storage", async () => {
    await withTemp(async (dir) => {
      const probe = join(dir, "probe")
      const help = await run(["backtest", "--help"], { LOAD_PROBE: probe })
      expect(help.code).toBe(0)
      expect(help.stdout).toMatch(/--program FILE/)
      expect(startedStorage(probe)).toEqual([])
      expect(readFileSync(probe, "utf8")).not.toMatch(/core\/src\/contract/)
      const serveHelp = await run(["--help"], { LOAD_PROBE: probe })
      expect(serveHelp.stdout).toMatch(/--data-dir/)
      expect(startedStorage(probe)).toEqual([])
    })
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
      // Not a terminal: a line of progress at each tenth, with the bar count.
      expect(out.stderr.trim().split("\n").at(-1)).toMatch(/\] 100% 336\/336 bars, completed$/)
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
      expect(missingFile.code).toBe(2)
      expect(missingFile.stderr).toMatch(/^--program .*absent\.js cannot be read: ENOENT/)
    })
  }, 120_000)

  it(
    "optimize searches a program's parameters in process, with trials on stderr and the result as JSON with --json",
    async () => {
      await withTemp(async (dir) => {
        writeFileSync(
          join(dir, "program.js"),
          `export const parameters = { every: { kind: "int", min: 2, max: 20, default: 10 } }
let n = 0
export function decide(data) {
  if (++n % data.params.every !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: 0.5 }
}
`
        )
        const args = ["optimize", "--program", join(dir, "program.js"), ...range, "--search", "grid", "--space"]
        const json = await run([...args, "every=4..12:4", "--objective", "total_return", "--json"])
        expect(json.code).toBe(0)
        const optimization = JSON.parse(json.stdout)
        expect(optimization).toMatchObject({ status: "completed", trials_total: 4, trials_done: 4 })
        expect([4, 8, 12]).toContain(optimization.result.best.params.every)
        const shown = await run([...args, "every=4..8:4"])
        expect(shown.code).toBe(0)
        expect(shown.stderr.trim().split("\n").at(-1)).toMatch(/\] 100% 3\/3 trials, best /)
        expect(shown.stdout).toContain("Optimisation (grid) of BTC 1h")
        expect(shown.stdout).toContain("Best trials")
        const refused = await run([...args, "width=1..2"])
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain("space.width is not a parameter of the program (it declares every)")
      })
    },
    180_000
  )

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
        expect(badTimeframe.code).toBe(2)
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
