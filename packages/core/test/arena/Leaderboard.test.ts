import { describe, expect, it } from "@effect/vitest"
import { AccountId } from "@trading-platform/core"
import type { DashboardAccount, EquityHour } from "../../src/arena/ArenaRepo.js"
import { rankAccounts } from "../../src/arena/Leaderboard.js"

const account = (id: number, name: string): DashboardAccount => ({
  account_id: AccountId.make(id),
  name,
  owner: "owner",
  account_type: "AI",
  model: "builtin",
  ai_trading: true,
  program_bindings: 0
})

const hour = 3_600_000
const start = Date.parse("2026-01-01T00:00:00Z")
const hoursOf = (
  id: number,
  values: ReadonlyArray<[open: number, high: number, low: number, close: number]>,
  from = 0
) =>
  values.map(([open, high, low, close], i): EquityHour => ({
    account_id: AccountId.make(id),
    hour: new Date(start + (from + i) * hour),
    open,
    high,
    low,
    close,
    updated_at: new Date(start + (from + i) * hour + 59 * 60_000)
  }))

describe("rankAccounts", () => {
  it("ranks by return from the last hour before the window, counting each hour's high before its low", () => {
    const since = new Date(start + hour)
    const ranked = rankAccounts(
      [account(1, "flat"), account(2, "dips"), account(3, "unmeasured")],
      [
        ...hoursOf(1, [[100, 100, 100, 100], [100, 100, 100, 100], [100, 100, 100, 100]]),
        // The hour before the window closes at 200: the baseline. Inside the window it peaks at 260,
        // falls to 195 within the same hour, and closes at 240.
        ...hoursOf(2, [[150, 210, 150, 200], [200, 260, 195, 240], [240, 250, 238, 250]])
      ],
      [{ account_id: AccountId.make(2), trades: 4, wins: 3 }],
      since
    )
    expect(ranked.map((e) => e.name)).toEqual(["dips", "flat"])
    const [dips, flat] = ranked
    expect(dips).toMatchObject({ start_equity: 200, equity: 250, return_percent: 25, trades: 4, win_rate: 0.75 })
    expect(dips!.max_drawdown_percent).toBeCloseTo(25, 10) // 260 → 195
    expect(dips!.equity_curve.map((p) => p.equity)).toEqual([240, 250])
    expect(dips!.sharpe).toBeGreaterThan(0)
    expect(flat).toMatchObject({
      start_equity: 100,
      return_percent: 0,
      max_drawdown_percent: 0,
      sharpe: 0,
      win_rate: null
    })
  })

  it("starts from the first hour's open when there is nothing before the window, and thins long curves to 500 points", () => {
    const values = Array.from(
      { length: 2000 },
      (_, i): [number, number, number, number] => [100 + i, 100 + i, 100 + i, 101 + i]
    )
    const [only] = rankAccounts([account(1, "long")], hoursOf(1, values), [], new Date(0))
    expect(only!.start_equity).toBe(100)
    expect(only!.equity_curve).toHaveLength(500)
    expect(only!.equity_curve.at(-1)!.equity).toBe(2100)
    expect(only!.sharpe).toBeGreaterThan(0)
  })
})
