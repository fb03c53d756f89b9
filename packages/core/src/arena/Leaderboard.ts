import { Array as Arr, Schema } from "effect"
import { AccountId, AccountType } from "../accounts/Account.js"
import { annualisedRatio, drawdowns, returnsOf } from "../backtests/BacktestMetrics.js"
import { defaultedParam } from "../http/Defaults.js"
import { Pagination } from "../http/Pagination.js"
import type { ClosingFills, DashboardAccount, EquityHour } from "./ArenaRepo.js"

const hour = 3_600_000

/** How far back the leaderboard looks; `all` is since each account was first measured. */
export const LeaderboardWindow = Schema.Literal("24h", "7d", "30d", "90d", "all")
export type LeaderboardWindow = typeof LeaderboardWindow.Type

const windowHours: Record<LeaderboardWindow, number> = { "24h": 24, "7d": 168, "30d": 720, "90d": 2160, all: Infinity }

/** The start of a window ending at `now` (the epoch for `all`). */
export const windowStart = (window: LeaderboardWindow, now: number) =>
  new Date(window === "all" ? 0 : now - windowHours[window] * hour)

/** The window when none is asked for. */
export const defaultWindow: LeaderboardWindow = "7d"

/** `GET /api/arena/leaderboard` parameters: the window (default `7d`) and the page. */
export const LeaderboardParams = Schema.Struct({
  window: defaultedParam(LeaderboardWindow, defaultWindow),
  ...Pagination.fields
}).annotations({ parseOptions: { errors: "all" } })
export type LeaderboardParams = typeof LeaderboardParams.Type

/** An account's equity at the close of an hour. */
export class ArenaEquityPoint extends Schema.Class<ArenaEquityPoint>("ArenaEquityPoint")({
  at: Schema.String,
  equity: Schema.Number
}) {}

/** One account of the dashboard, ranked by its return over the window. */
export class LeaderboardEntry extends Schema.Class<LeaderboardEntry>("LeaderboardEntry")({
  rank: Schema.Int,
  account_id: AccountId,
  name: Schema.String,
  /** The owner's username. */
  owner: Schema.String,
  account_type: AccountType,
  /** An AI account's model (`builtin` for the built-in one); null for a manual account. */
  model: Schema.NullOr(Schema.String),
  /** Whether the account's AI trader is enabled. */
  ai_trading: Schema.Boolean,
  /** Enabled program bindings trading the account. */
  program_bindings: Schema.Int,
  /** Equity at the last measurement. */
  equity: Schema.Number,
  /** Equity the window's return is measured from: the last measurement before it, else the first in it. */
  start_equity: Schema.Number,
  return_percent: Schema.Number,
  /** Largest fall of equity from a running peak in the window, in percent of that peak. */
  max_drawdown_percent: Schema.Number,
  /** Annualised mean over deviation of hourly returns; null with fewer than two hours. */
  sharpe: Schema.NullOr(Schema.Number),
  /** Fills that closed (part of) a position in the window. */
  trades: Schema.Int,
  /** Share of those fills that gained after their fee; null without trades. */
  win_rate: Schema.NullOr(Schema.Number),
  /** Equity at the last measurement of each hour in the window (at most 500 points, thinned evenly), for a chart. */
  equity_curve: Schema.Array(ArenaEquityPoint),
  measured_at: Schema.String
}) {}

/** `GET /api/arena/leaderboard`: the dashboard's accounts side by side, best return first. */
export class Leaderboard extends Schema.Class<Leaderboard>("Leaderboard")({
  window: LeaderboardWindow,
  from: Schema.String,
  to: Schema.String,
  entries: Schema.Array(LeaderboardEntry),
  /** Ranked accounts on all pages. */
  total: Schema.Int
}) {}

const maxPoints = 500

/** Every `k`-th point so that at most `maxPoints` remain, always keeping the last. */
const thin = <A>(points: ReadonlyArray<A>): ReadonlyArray<A> => {
  if (points.length <= maxPoints) return points
  const step = Math.ceil(points.length / maxPoints)
  return points.filter((_, i) => (points.length - 1 - i) % step === 0)
}

/**
 * Ranks the dashboard's accounts over a window from their equity hours (`equityHours`: each
 * account's hours from `since`, and its last hour before, in order) and closing fills. An hour's
 * high is taken to come before its low, so a drawdown inside an hour is counted at its worst.
 */
export const rankAccounts = (
  accounts: ReadonlyArray<DashboardAccount & { readonly model: string | null }>,
  equityHours: ReadonlyArray<EquityHour>,
  fills: ReadonlyArray<ClosingFills>,
  since: Date
): ReadonlyArray<Omit<LeaderboardEntry, "rank">> => {
  const hoursOf = Arr.groupBy(equityHours, (h) => String(h.account_id))
  const fillsOf = new Map(fills.map((f) => [f.account_id as number, f]))
  const entries = accounts.flatMap((account) => {
    const all = hoursOf[account.account_id] ?? []
    const before = all[0] !== undefined && all[0].hour < since ? all[0] : undefined
    const hours = before === undefined ? all : all.slice(1)
    const last = hours[hours.length - 1]
    if (last === undefined) return []
    const start = before?.close ?? hours[0]!.open
    const closes = hours.map((h) => h.close)
    const path = [start, ...hours.flatMap((h) => [h.high, h.low, h.close])]
    const returns = returnsOf(start, closes)
    const closed = fillsOf.get(account.account_id)
    return [{
      ...account,
      equity: last.close,
      start_equity: start,
      return_percent: start > 0 ? ((last.close - start) / start) * 100 : 0,
      max_drawdown_percent: drawdowns(path).worst * 100,
      sharpe: returns.length < 2 ? null : annualisedRatio(returns, 365 * 24, false),
      trades: closed?.trades ?? 0,
      win_rate: closed === undefined || closed.trades === 0 ? null : closed.wins / closed.trades,
      equity_curve: thin(hours).map((h) => new ArenaEquityPoint({ at: h.updated_at.toISOString(), equity: h.close })),
      measured_at: last.updated_at.toISOString()
    }]
  })
  return entries.sort((a, b) => b.return_percent - a.return_percent || a.account_id - b.account_id)
}
