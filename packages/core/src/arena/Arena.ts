import { Clock, Duration, Effect, Layer, Option } from "effect"
import { Bindings } from "../automation/Bindings.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { leasedLoop, Leases } from "../jobs/Leases.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { type Exchange, type Ticker, type VenueFailure, Venues } from "../venues/Venue.js"
import { AccountPnl, AccountPnlList, PnlRefreshStatus } from "./ArenaPnl.js"
import { ArenaRepo } from "./ArenaRepo.js"

/** The lease (and status row) of the PnL refresher. */
const refresherName = "arena_pnl"

/**
 * The arena PnL refresher: every `pnlRefreshInterval`, the replica holding the `arena_pnl` lease
 * recomputes each account's realised PnL and fees from its fills and its unrealised PnL from its
 * positions marked to the venue's price. An account that cannot be marked keeps its last figures
 * with the reason; a pass that fails as a whole is recorded as the refresher's error.
 */
export const ArenaPnlRefresherLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const repo = yield* ArenaRepo
    const bindings = yield* Bindings
    const venues = yield* Venues

    const pass = Effect.gen(function*() {
      // One price fetch per venue and pass.
      const marks = new Map<Exchange, ReadonlyMap<string, Ticker>>()
      const tickers = (exchange: Exchange): Effect.Effect<ReadonlyMap<string, Ticker>, VenueFailure> => {
        const known = marks.get(exchange)
        return known
          ? Effect.succeed(known)
          : Effect.tap(venues[exchange].tickers, (all) => Effect.sync(() => marks.set(exchange, all)))
      }
      for (const totals of yield* repo.fillTotals()) {
        const at = new Date(yield* Clock.currentTimeMillis)
        const positions = yield* bindings.openPositions(totals.account_id)
        const unrealized = yield* Effect.either(
          Effect.reduce(positions, 0, (sum, p) =>
            Effect.flatMap(tickers(p.exchange), (all) => {
              const mark = all.get(p.symbol)
              return mark === undefined
                ? Effect.fail({ error: `no price for ${p.symbol} on ${p.exchange}` })
                : Effect.succeed(sum + (p.side === "long" ? 1 : -1) * p.size * (mark.price - p.entry_price))
            }))
        )
        if (unrealized._tag === "Left") {
          const error = `Account ${totals.account_id} could not be marked: ${unrealized.left.error}`
          yield* repo.saveError(totals.account_id, error)
          continue
        }
        yield* repo.save({ ...totals, unrealized_pnl: unrealized.right, error: null, at })
      }
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
    }).pipe(dieOnStorageFailure, Effect.withSpan("Arena.status"))

    const pnl = (caller: CurrentUserShape) =>
      repo.ofUser(caller.id).pipe(
        Effect.map((rows) =>
          new AccountPnlList({
            accounts: rows.map((r) => new AccountPnl({ ...r, total_pnl: r.realized_pnl + r.unrealized_pnl - r.fees }))
          })
        ),
        dieOnStorageFailure,
        Effect.withSpan("Arena.pnl", { attributes: { userId: caller.id } })
      )

    return { status, pnl } as const
  })
}) {}
