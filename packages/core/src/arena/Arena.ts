import { Array as Arr, Clock, Duration, Effect, Layer, Option } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { builtinModel } from "../aitraders/AiTrader.js"
import { isBuiltin } from "../aitraders/TraderModel.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { pageOf } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { leasedLoop, Leases } from "../jobs/Leases.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { type Exchange, type Ticker, type VenueFailure, Venues } from "../venues/Venue.js"
import { AccountPnl, AccountPnlList, PnlRefreshStatus } from "./ArenaPnl.js"
import { ArenaRepo, type PnlFigures } from "./ArenaRepo.js"
import {
  defaultWindow,
  Leaderboard,
  LeaderboardEntry,
  type LeaderboardParams,
  rankAccounts,
  windowStart
} from "./Leaderboard.js"

/** The lease (and status row) of the PnL refresher. */
const refresherName = "arena_pnl"

/**
 * The arena PnL refresher: every `pnlRefreshInterval`, the replica holding the `arena_pnl` lease
 * recomputes each account's realised PnL and fees from its fills and its unrealised PnL from its
 * positions marked to the venue's price, and adds the equity of each account on the dashboard to
 * its hour (the leaderboard's history). An account that cannot be marked keeps its last figures
 * with the reason and no equity that hour; a pass that fails as a whole is recorded as the
 * refresher's error. A pass reads every account and position in two statements and writes in two,
 * however many accounts there are.
 */
export const ArenaPnlRefresherLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const repo = yield* ArenaRepo
    const venues = yield* Venues

    const pass = Effect.gen(function*() {
      const accounts = yield* repo.measured()
      if (accounts.length === 0) return
      const at = new Date(yield* Clock.currentTimeMillis)
      const positionsOf = Arr.groupBy(yield* repo.positions(), (p) => String(p.account_id))
      // One price fetch per venue and pass.
      const marks = new Map<Exchange, ReadonlyMap<string, Ticker>>()
      const tickers = (exchange: Exchange): Effect.Effect<ReadonlyMap<string, Ticker>, VenueFailure> => {
        const known = marks.get(exchange)
        return known
          ? Effect.succeed(known)
          : Effect.tap(venues[exchange].tickers, (all) => Effect.sync(() => marks.set(exchange, all)))
      }
      const pnl: Array<PnlFigures> = []
      const equity: Array<{ account_id: AccountId; equity: number }> = []
      for (const account of accounts) {
        const unrealized = yield* Effect.either(
          Effect.reduce(
            positionsOf[account.account_id] ?? [],
            0,
            (sum, p) =>
              Effect.flatMap(tickers(p.exchange), (all) => {
                const mark = all.get(p.symbol)
                return mark === undefined
                  ? Effect.fail({ error: `no price for ${p.symbol} on ${p.exchange}` })
                  : Effect.succeed(sum + (p.side === "long" ? 1 : -1) * p.size * (mark.price - p.entry_price))
              })
          )
        )
        if (unrealized._tag === "Left") {
          const error = `Account ${account.account_id} could not be marked: ${unrealized.left.error}`
          if (account.last_order_id !== null) yield* repo.saveError(account.account_id, error)
          continue
        }
        if (account.last_order_id !== null) {
          pnl.push({
            account_id: account.account_id,
            realized_pnl: account.realized_pnl ?? 0,
            unrealized_pnl: unrealized.right,
            fees: account.fees ?? 0,
            last_order_id: account.last_order_id
          })
        }
        if (account.on_dashboard) {
          equity.push({ account_id: account.account_id, equity: account.cash + unrealized.right })
        }
      }
      yield* repo.savePnl(pnl, at)
      yield* repo.recordEquity(equity, at)
    })

    yield* leasedLoop(refresherName, { interval: options.pnlRefreshInterval, lease: options.lease }, pass)
  })
)

/** Arena reads: the refresher's status and the caller's accounts' PnL. */
export class Arena extends Effect.Service<Arena>()("@trading-platform/core/Arena", {
  effect: Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const repo = yield* ArenaRepo
    const leases = yield* Leases

    const status = Effect.gen(function*() {
      const lease = Option.getOrNull(yield* leases.find(refresherName))
      const { error, failed, unsynced } = yield* repo.unsynced
      const last_refresh_at = lease?.last_run_at?.toISOString() ?? null
      const answer = (status: "ok" | "degraded" | "error", reason?: string) =>
        new PnlRefreshStatus({ status, last_refresh_at, unsynced, ...(reason === undefined ? {} : { reason }) })
      if (last_refresh_at === null) return answer("degraded", "PnL has not been refreshed yet")
      if (lease?.last_error) return answer("error", `The last refresh failed: ${lease.last_error}`)
      const staleAfter = 2 * Duration.toMillis(options.pnlRefreshInterval)
      if ((yield* Clock.currentTimeMillis) - Date.parse(last_refresh_at) > staleAfter) {
        return answer("degraded", `No refresh since ${last_refresh_at}, over two refresh intervals ago`)
      }
      if (failed > 0) return answer("degraded", `${failed} account(s) could not be marked: ${error}`)
      return answer("ok")
    }).pipe(dieOnStorageFailure, withRequestSpan("Arena.status"))

    const pnl = (caller: CurrentUserShape) =>
      repo.ofUser(caller.id).pipe(
        Effect.map((rows) =>
          new AccountPnlList({
            accounts: rows.map((r) => new AccountPnl({ ...r, total_pnl: r.realized_pnl + r.unrealized_pnl - r.fees }))
          })
        ),
        dieOnStorageFailure,
        withRequestSpan("Arena.pnl", { attributes: { userId: caller.id } })
      )

    /** The dashboard's accounts (every user's that show on it) ranked over the window; one page of them. */
    const leaderboard = (params: LeaderboardParams) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const window = params.window ?? defaultWindow
        const since = windowStart(window, now)
        const [accounts, hours, fills] = yield* Effect.all([
          repo.dashboard(),
          repo.equityHours(since),
          repo.closingFills(since)
        ])
        const ranked = rankAccounts(
          accounts.map((a) => ({
            ...a,
            model: a.account_type === "AI" ? (isBuiltin(a) ? builtinModel : a.model) : null
          })),
          hours,
          fills,
          since
        )
        const { limit, offset } = pageOf(params)
        return new Leaderboard({
          window,
          from: since.toISOString(),
          to: new Date(now).toISOString(),
          entries: ranked.slice(offset, offset + limit).map((e, i) =>
            new LeaderboardEntry({ ...e, rank: offset + i + 1 })
          ),
          total: ranked.length
        })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Arena.leaderboard", { attributes: { window: params.window ?? defaultWindow } })
      )

    return { status, pnl, leaderboard } as const
  })
}) {}
