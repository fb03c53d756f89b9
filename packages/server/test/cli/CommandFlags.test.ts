import { describe, expect, it } from "@effect/vitest"
import { backtestDefaults } from "@trading-platform/core/contract"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { checkCommand, usageOf } from "../../src/cli/CommandFlags.js"

const dir = mkdtempSync(join(tmpdir(), "tp-flags-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const program = join(dir, "program.js")
writeFileSync(program, "export const decide = () => ({ operation: \"hold\" })")
const csv = join(dir, "btc.csv")
writeFileSync(csv, "time,open,high,low,close,volume\n")

const valid = [
  "--program",
  program,
  "--symbol",
  "BTC",
  "--from",
  "2025-01-01T00:00:00Z",
  "--to",
  "2025-01-02T00:00:00Z"
]

/** The one line a wrong command line is answered with. */
const mistakeOf = async (
  command: "backtest" | "optimize" | "import" | "migrate" | "operator" | "openapi",
  argv: Array<string>
) => {
  const checked = await checkCommand(command, argv)
  expect(checked._tag).toBe("Mistake")
  return checked._tag === "Mistake" ? checked.message : ""
}

describe("the commands' flags, checked before anything starts", () => {
  it("an unknown flag names the command's flags", async () => {
    expect(await mistakeOf("migrate", ["--dta-dir", "x"])).toBe(
      "--dta-dir is not a flag of migrate; its flags are --data-dir, --database-url"
    )
  })

  it("a value outside the contract's choices says which it may be, as the API does", async () => {
    expect(await mistakeOf("backtest", [...valid, "--timeframe", "2h"])).toBe(
      "--timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'"
    )
    expect(await mistakeOf("backtest", [...valid, "--fill-timing", "later"])).toBe(
      "--fill-timing must be one of next_open, close; got 'later'"
    )
  })

  it("a date that does not read as one is refused with what was given", async () => {
    expect(await mistakeOf("backtest", [...valid.slice(0, -2), "--to", "yesterday"])).toBe(
      "--to must be an ISO-8601 date and time; got 'yesterday'"
    )
  })

  it("a number flag given words, or a number out of the contract's range, is refused", async () => {
    expect(await mistakeOf("backtest", [...valid, "--leverage", "ten"])).toBe("--leverage must be a number; got 'ten'")
    expect(await mistakeOf("backtest", [...valid, "--leverage", "500"])).toBe(
      "--leverage must be a number between 1 and 125; got 500"
    )
  })

  it("a required flag left out, or given without its value, is said once", async () => {
    expect(await mistakeOf("backtest", ["--symbol"])).toBe(
      "--symbol needs a value (SYMBOL); --program is required; --from is required; --to is required"
    )
    expect(await mistakeOf("import", ["candles", csv, "--name", "btc", "--symbol", "BTC", "--timeframe", "1h"])).toBe(
      "--user is required"
    )
  })

  it("several mistakes are one line, a sentence each", async () => {
    const message = await mistakeOf("backtest", ["--timeframe", "2h", "--json=yes", "--bogus", "1"])
    expect(message.split("\n")).toHaveLength(1)
    expect(message.split("; ").filter((s) => s.startsWith("--"))).toHaveLength(7)
    expect(message).toContain("--json takes no value; got 'yes'")
    expect(message).toContain("--timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'")
  })

  it("an unreadable program or candle file, stray arguments and wrong sub-commands are mistakes too", async () => {
    expect(await mistakeOf("backtest", [...valid, "--program", join(dir, "absent.js")].slice(2))).toMatch(
      /^--program .*absent\.js cannot be read: ENOENT/
    )
    expect(await mistakeOf("openapi", ["out.json"])).toBe("openapi takes flags only; got 'out.json'")
    expect(
      await mistakeOf("import", ["rows", csv, "--user", "a@b.c", "--name", "b", "--symbol", "BTC", "--timeframe", "1h"])
    )
      .toBe("import takes candles, as in: import candles FILE...; got 'rows'")
    expect(await mistakeOf("operator", ["promote", "ada@example.com"])).toBe(
      "operator takes grant EMAIL, revoke EMAIL or list; got 'promote'"
    )
  })

  it("accepted flags become the contract's decoded request (--timeframe 1h unless given)", async () => {
    const checked = await checkCommand("backtest", [...valid, "--leverage=3", "--json"])
    expect(checked).toMatchObject({
      _tag: "Ready",
      plan: {
        _tag: "backtest",
        program,
        json: true,
        request: { symbol: "BTC", timeframe: "1h", leverage: 3, start: "2025-01-01T00:00:00Z" }
      }
    })
  })

  it("--symbols and --timeframes are comma-separated lists; one of --symbol and --symbols is required", async () => {
    const withoutSymbol = [...valid.slice(0, 2), ...valid.slice(4)]
    const checked = await checkCommand("backtest", [...withoutSymbol, "--symbols", "BTC, ETH", "--timeframes", "4h,1d"])
    expect(checked).toMatchObject({
      _tag: "Ready",
      plan: { request: { symbols: ["BTC", "ETH"], timeframes: ["4h", "1d"] } }
    })
    expect(await mistakeOf("backtest", [...valid, "--symbols", "ETH"])).toBe(
      "--symbol or --symbols is required, one of the two"
    )
    expect(await mistakeOf("backtest", withoutSymbol)).toBe("--symbol or --symbols is required, one of the two")
    expect(await mistakeOf("backtest", [...valid, "--timeframes", "4h,2h"])).toBe(
      "--timeframes must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d; got '2h'"
    )
  })

  it("--help shows the contract's defaults", async () => {
    expect(await checkCommand("backtest", ["--bogus", "--help"])).toEqual({ _tag: "Help", text: usageOf("backtest") })
    const help = usageOf("backtest")
    const shown = (flag: string) => new RegExp(`--${flag} .*\\(([^)]*)\\)$`, "m").exec(help)?.[1]
    expect(shown("exchange")).toBe(backtestDefaults.exchange)
    expect(Number(shown("initial-balance"))).toBe(backtestDefaults.initial_balance)
    expect(Number(shown("fee-rate"))).toBe(backtestDefaults.fee_rate)
    expect(Number(shown("maker-fee-rate"))).toBe(backtestDefaults.maker_fee_rate)
    expect(Number(shown("slippage"))).toBe(backtestDefaults.slippage)
    expect(shown("slippage-model")).toBe(backtestDefaults.slippage_model)
    expect(shown("fill-timing")).toBe(backtestDefaults.fill_timing)
    expect(shown("margin-mode")).toBe(backtestDefaults.margin_mode)
    expect(Number(shown("leverage"))).toBe(backtestDefaults.leverage)
    expect(Number(shown("warmup-bars"))).toBe(backtestDefaults.warmup_bars)
  })

  it("optimize reads its space, constraints and walk-forward into the contract's request, and says what is wrong", async () => {
    const checked = await checkCommand("optimize", [
      ...valid,
      "--search",
      "grid",
      "--space",
      "fast=5..50:5,width=0.5..3/6,side=long|short,slow",
      "--trials",
      "200",
      "--constraints",
      "min_trades=10,max_drawdown_percent=30",
      "--walk-forward",
      "anchored:3:100:20",
      "--objective",
      "calmar"
    ])
    expect(checked).toMatchObject({
      _tag: "Ready",
      plan: {
        _tag: "optimize",
        program,
        json: false,
        request: {
          symbol: "BTC",
          timeframe: "1h",
          search: "grid",
          space: {
            fast: { min: 5, max: 50, step: 5 },
            width: { min: 0.5, max: 3, steps: 6 },
            side: { choices: ["long", "short"] },
            slow: {}
          },
          budget: { trials: 200 },
          constraints: { min_trades: 10, max_drawdown_percent: 30 },
          walk_forward: { mode: "anchored", folds: 3, in_sample_bars: 100, out_of_sample_bars: 20 },
          objective: "calmar"
        }
      }
    })
    expect(await mistakeOf("optimize", valid)).toBe("--search is required; --space is required")
    expect(await mistakeOf("optimize", [...valid, "--search", "annealing", "--space", "fast"])).toBe(
      "--search must be one of grid, random, tpe; got 'annealing'"
    )
    expect(await mistakeOf("optimize", [...valid, "--search", "grid", "--space", "fast=a..b"])).toBe(
      "--space needs numbers in 'fast=a..b'"
    )
    expect(await mistakeOf("optimize", [...valid, "--search", "grid", "--space", "fast", "--constraints", "trades=3"]))
      .toBe(
        "--constraints names min_trades or max_drawdown_percent; got 'trades'"
      )
    expect(
      await mistakeOf("optimize", [...valid, "--search", "grid", "--space", "fast", "--walk-forward", "rolling:4"])
    ).toBe(
      "--walk-forward is MODE:FOLDS:IN_SAMPLE_BARS:OUT_OF_SAMPLE_BARS; got 'rolling:4'"
    )
  })
})
