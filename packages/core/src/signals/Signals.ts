import { Clock, Duration, Effect, Either } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { ExchangeMismatch, InvalidInput, NotFound, SignalInUse, SymbolNotListed } from "../http/Errors.js"
import { pageOf } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { MarketData } from "../market/MarketData.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy, type Owner } from "../users/Ownership.js"
import { type Candle, type Exchange, type Timeframe, timeframeMillis, Venues } from "../venues/Venue.js"
import { candleMillis, maxHole, recordedCoverage, windowCoverage } from "./Coverage.js"
import { candleMetrics, evaluateCondition, windowInputs } from "./Metrics.js"
import { sampleSymbols } from "./Sampler.js"
import {
  Evaluation,
  poolDefaults,
  type PoolId,
  type PoolRequest,
  type PoolUpdate,
  SamplingStatus,
  Signal,
  signalDefaults,
  type SignalId,
  SignalPool,
  type SignalRequest,
  SignalsListing,
  Trigger,
  TriggerList,
  type TriggerQuery,
  WalletTrackingStatus
} from "./Signal.js"
import { SignalEngineRepo } from "./SignalEngineRepo.js"
import { type PoolRow, type PoolWrite, type SignalRow, SignalsRepo } from "./SignalsRepo.js"

const toSignal = (row: SignalRow) =>
  new Signal({
    id: row.id,
    exchange: row.exchange,
    signal_name: row.signal_name,
    trigger_condition: row.trigger_condition,
    description: row.description,
    enabled: row.enabled,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, fromDecodedRow)

const toPool = (row: PoolRow) =>
  new SignalPool({
    id: row.id,
    exchange: row.exchange,
    pool_name: row.pool_name,
    source_type: row.source_type,
    source_config: row.source_config,
    signal_ids: row.signal_ids,
    symbols: row.symbols,
    logic: row.logic,
    enabled: row.enabled,
    created_at: row.created_at
  }, fromDecodedRow)

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A pool as written: the request's fields (an update's merged onto the stored pool). */
type PoolFields = Omit<PoolWrite, "now"> & { readonly signal_ids: ReadonlyArray<SignalId> }

/** Signals and pools of each user: ownership, and the rules that make a pool one the engine can run. */
export class Signals extends Effect.Service<Signals>()("@trading-platform/core/Signals", {
  effect: Effect.gen(function*() {
    const repo = yield* SignalsRepo
    const engineRepo = yield* SignalEngineRepo
    const venues = yield* Venues
    const marketData = yield* MarketData
    const interval = Duration.toMillis((yield* PlatformConfig).signals.samplingInterval)

    const ownedSignal = (caller: CurrentUserShape, id: SignalId) =>
      repo.findSignal(id).pipe(ownedBy(caller, `Signal ${id}`))
    /** The caller's pool: 404 when it does not exist, 403 when it is another user's (a binding listens only to its owner's). */
    const ownedPool = (caller: Owner, id: PoolId) => repo.findPool(id).pipe(ownedBy(caller, `Pool ${id}`))

    /** Fails with `symbol_not_listed` naming every symbol the venue does not list. */
    const listed = (exchange: Exchange, symbols: ReadonlyArray<string>) => marketData.listed(exchange, symbols)

    /**
     * The rules of a pool: its signals are the caller's (others' ids answer 404, like missing
     * ones, so nothing leaks) and on the pool's exchange; a `market_signals` pool's symbols are
     * listed on that venue; a `wallet_tracking` pool is on venue1 and has addresses.
     */
    const checkPool = (caller: CurrentUserShape, pool: PoolFields) =>
      Effect.gen(function*() {
        const found = yield* repo.signalsByIds(pool.signal_ids)
        const mine = new Map(found.filter((s) => s.user_id === caller.id).map((s) => [s.id as number, s]))
        const unknown = pool.signal_ids.filter((id) => !mine.has(id))
        if (unknown.length > 0) return yield* new NotFound({ error: `Signal ${unknown.join(", ")} not found` })
        const elsewhere = [...mine.values()].filter((s) => s.exchange !== pool.exchange)
        if (elsewhere.length > 0) {
          return yield* new ExchangeMismatch({
            error: `Signal ${elsewhere.map((s) => s.id).join(", ")} is not on the pool's exchange ${pool.exchange}`
          })
        }
        if (pool.source_type === "market_signals") return yield* listed(pool.exchange, pool.symbols)
        if (pool.exchange !== "venue1") {
          return yield* new ExchangeMismatch({
            error: "Wallet tracking watches venue1 wallets: the pool's exchange must be venue1"
          })
        }
        if ((pool.source_config.addresses ?? []).length === 0) {
          return yield* new InvalidInput({
            error: "A wallet_tracking pool needs source_config.addresses",
            issues: [{ path: "source_config.addresses", message: "must list at least one address" }]
          })
        }
      })

    const list = (caller: CurrentUserShape) =>
      Effect.all([repo.poolsByUser(caller.id), repo.signalsByUser(caller.id)]).pipe(
        Effect.map(([pools, signals]) =>
          new SignalsListing({ pools: pools.map(toPool), signals: signals.map(toSignal) })
        ),
        dieOnStorageFailure,
        withRequestSpan("Signals.list", { attributes: { userId: caller.id } })
      )

    const signalWrite = (request: SignalRequest, exchange: Exchange) => {
      const input = { ...signalDefaults, ...request }
      return Effect.map(now, (at) => ({
        exchange,
        signal_name: input.signal_name,
        description: input.description ?? null,
        trigger_condition: input.trigger_condition,
        enabled: input.enabled,
        now: at
      }))
    }

    const create = (caller: CurrentUserShape, input: SignalRequest) =>
      signalWrite(input, input.exchange ?? signalDefaults.exchange).pipe(
        Effect.flatMap((write) => repo.insertSignal({ ...write, user_id: caller.id })),
        Effect.map(toSignal),
        dieOnStorageFailure,
        withRequestSpan("Signals.create", { attributes: { userId: caller.id } })
      )

    const get = (caller: CurrentUserShape, id: SignalId) =>
      ownedSignal(caller, id).pipe(
        Effect.map(toSignal),
        dieOnStorageFailure,
        withRequestSpan("Signals.get", { attributes: { userId: caller.id, signalId: id } })
      )

    const update = (caller: CurrentUserShape, id: SignalId, input: SignalRequest) =>
      Effect.gen(function*() {
        const before = yield* ownedSignal(caller, id)
        const exchange = input.exchange ?? before.exchange
        if (before.exchange !== exchange && (yield* repo.poolsUsing(id)).length > 0) {
          return yield* new ExchangeMismatch({
            error: `Signal ${id} is in a pool on ${before.exchange}; its exchange cannot change`
          })
        }
        return toSignal(yield* repo.updateSignal({ ...yield* signalWrite(input, exchange), user_id: caller.id, id }))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Signals.update", { attributes: { userId: caller.id, signalId: id } })
      )

    const remove = (caller: CurrentUserShape, id: SignalId) =>
      Effect.gen(function*() {
        yield* ownedSignal(caller, id)
        const pools = yield* repo.poolsUsing(id)
        if (pools.length > 0) {
          return yield* new SignalInUse({ error: `Signal ${id} is in pool ${pools.join(", ")}`, pool_ids: pools })
        }
        yield* repo.deleteSignal(id)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Signals.remove", { attributes: { userId: caller.id, signalId: id } })
      )

    const dedupe = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]

    const writePool = (fields: PoolFields) =>
      Effect.map(now, (at): PoolWrite => ({
        exchange: fields.exchange,
        pool_name: fields.pool_name,
        source_type: fields.source_type,
        source_config: fields.source_config,
        symbols: dedupe(fields.symbols),
        logic: fields.logic,
        enabled: fields.enabled,
        now: at
      }))

    const createPool = (caller: CurrentUserShape, input: PoolRequest) =>
      Effect.gen(function*() {
        const full = { ...poolDefaults, ...input }
        const fields = { ...full, signal_ids: dedupe(full.signal_ids) }
        yield* checkPool(caller, fields)
        return toPool(yield* repo.insertPool(caller.id, yield* writePool(fields), fields.signal_ids))
      }).pipe(dieOnStorageFailure, withRequestSpan("Signals.createPool", { attributes: { userId: caller.id } }))

    const updatePool = (caller: CurrentUserShape, id: PoolId, input: PoolUpdate) =>
      Effect.gen(function*() {
        const before = yield* ownedPool(caller, id)
        const pick = <K extends keyof PoolUpdate & keyof PoolFields>(key: K) =>
          (input[key] ?? before[key]) as PoolFields[K]
        const fields: PoolFields = {
          exchange: pick("exchange"),
          pool_name: pick("pool_name"),
          source_type: pick("source_type"),
          source_config: pick("source_config"),
          symbols: pick("symbols"),
          logic: pick("logic"),
          enabled: pick("enabled"),
          signal_ids: dedupe(pick("signal_ids"))
        }
        yield* checkPool(caller, fields)
        return toPool(yield* repo.updatePool(id, yield* writePool(fields), fields.signal_ids))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Signals.updatePool", { attributes: { userId: caller.id, poolId: id } })
      )

    const removePool = (caller: CurrentUserShape, id: PoolId) =>
      Effect.zipRight(ownedPool(caller, id), repo.deletePool(id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Signals.removePool", { attributes: { userId: caller.id, poolId: id } })
      )

    const triggers = (caller: Owner, request: TriggerQuery) =>
      Effect.gen(function*() {
        const query = { ...request, ...pageOf(request) }
        if (query.pool_id !== undefined) yield* ownedPool(caller, query.pool_id)
        // One row more than asked says whether there is a next page.
        const rows = yield* repo.triggers({
          user_id: caller.id,
          pool_id: query.pool_id,
          symbol: query.symbol,
          since: query.since === undefined ? undefined : new Date(query.since.epochMillis),
          limit: query.limit + 1,
          offset: query.offset
        })
        return new TriggerList({
          triggers: rows.slice(0, query.limit).map((row) => new Trigger(row)),
          next_offset: rows.length > query.limit ? query.offset + query.limit : null
        })
      }).pipe(dieOnStorageFailure, withRequestSpan("Signals.triggers", { attributes: { userId: caller.id } }))

    /**
     * The signal's condition on the symbol now: the stored window plus a fresh sample taken for
     * this answer (neither stored nor counted as the engine's).
     */
    const evaluate = (caller: CurrentUserShape, id: SignalId, symbol: string) =>
      Effect.gen(function*() {
        const signal = yield* ownedSignal(caller, id)
        const condition = signal.trigger_condition
        const at = yield* Clock.currentTimeMillis
        const start = at - timeframeMillis[condition.time_window]
        // From a little before the window: enough to see whether the samples reach back to its start.
        const stored = yield* engineRepo.samples({
          exchange: signal.exchange,
          symbol,
          since: new Date(start - interval - maxHole(interval))
        })
        // The fresh sample's flows cover what an engine sample would: since the last one, at most an interval.
        const since = Math.max(at - interval, stored.length > 0 ? stored[stored.length - 1]!.sampled_at : -Infinity)
        const result = (yield* sampleSymbols(venues[signal.exchange], [symbol], at, () => since)).get(symbol)!
        if (Either.isLeft(result)) {
          const error = result.left
          return yield* error._tag === "UnknownSymbol"
            ? new SymbolNotListed({ error: `Not listed on ${signal.exchange}: ${symbol}`, symbols: [symbol] })
            : Effect.fail(error)
        }
        const history = [...stored.filter((s) => s.sampled_at < at), result.right]
        const sampled = windowInputs(history, interval, at)
        // Candles stand in where the samples do not cover a price metric's window, as in the engine.
        const candles = candleMetrics.has(condition.metric) &&
            !windowCoverage(sampled.sampledFrom, condition.time_window, at).ready
          ? yield* marketData.candles({ _tag: "Venue", exchange: signal.exchange }, {
            symbol,
            timeframe: "1m",
            start: Math.floor(start / candleMillis) * candleMillis,
            end: at
          }).pipe(Effect.orElseSucceed((): ReadonlyArray<Candle> => []))
          : []
        return new Evaluation({
          signal_id: signal.id,
          signal_name: signal.signal_name,
          ...condition,
          ...evaluateCondition(condition, { ...sampled, candles }, at),
          exchange: signal.exchange,
          symbol,
          sample_count: history.filter((s) => s.sampled_at >= start).length,
          evaluated_at: new Date(at).toISOString()
        })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Signals.evaluate", { attributes: { userId: caller.id, signalId: id, symbol } })
      )

    const poolStatus = (caller: CurrentUserShape) =>
      Effect.all([
        repo.poolsByUser(caller.id),
        repo.poolStatus(caller.id),
        repo.symbolHealth(caller.id),
        repo.signalsByUser(caller.id),
        Clock.currentTimeMillis
      ]).pipe(
        Effect.map(([pools, statuses, health, signals, now]) => {
          const byPool = new Map(statuses.map((s) => [s.pool_id as number, s]))
          const bySymbol = new Map(health.map((h) => [`${h.exchange}:${h.symbol}`, h]))
          const windowOf = new Map(signals.map((s) => [s.id as number, s.trigger_condition.time_window]))
          const iso = (date: Date | null | undefined) => date ? date.toISOString() : null
          return new SamplingStatus({
            pools: pools.map((pool) => {
              const status = byPool.get(pool.id)
              const market = pool.source_type === "market_signals"
              const windows = [...new Set(pool.signal_ids.flatMap((id) => windowOf.get(id) ?? []))]
                .sort((a: Timeframe, b: Timeframe) => timeframeMillis[a] - timeframeMillis[b])
              return {
                pool_id: pool.id,
                pool_name: pool.pool_name,
                enabled: pool.enabled,
                symbol_count: market ? pool.symbols.length : 0,
                last_sampled_at: status?.last_sampled_at ?? null,
                errors: status?.errors ?? 0,
                last_error: status?.last_error ?? null,
                symbols: (market ? pool.symbols : []).map((symbol) => {
                  const h = bySymbol.get(`${pool.exchange}:${symbol}`)
                  const last = h?.last_sampled_at?.getTime() ?? null
                  return {
                    symbol,
                    last_sampled_at: iso(h?.last_sampled_at),
                    windows: windows.map((time_window) => {
                      const c = recordedCoverage(last, h?.covered_from?.getTime() ?? null, interval, time_window, now)
                      return {
                        time_window,
                        covered_from: c.covered_from === null ? null : new Date(c.covered_from).toISOString(),
                        coverage: c.coverage,
                        ready: c.ready
                      }
                    })
                  }
                })
              }
            })
          })
        }),
        dieOnStorageFailure,
        withRequestSpan("Signals.poolStatus", { attributes: { userId: caller.id } })
      )

    const walletStatus = (caller: CurrentUserShape) =>
      Effect.all([repo.poolsByUser(caller.id), repo.walletStatus(caller.id)]).pipe(
        Effect.map(([pools, status]) => {
          const tracking = pools.filter((p) => p.enabled && p.source_type === "wallet_tracking")
          const wallets = new Set(
            tracking.flatMap((p) => (p.source_config.addresses ?? []).map((a) => a.toLowerCase()))
          )
          return new WalletTrackingStatus({
            enabled: tracking.length > 0,
            last_sync_at: status.last_sync_at,
            tracked_wallets: wallets.size,
            errors: status.errors
          })
        }),
        dieOnStorageFailure,
        withRequestSpan("Signals.walletStatus", { attributes: { userId: caller.id } })
      )

    return {
      ownedPool,
      list,
      create,
      get,
      update,
      remove,
      createPool,
      updatePool,
      removePool,
      triggers,
      evaluate,
      poolStatus,
      walletStatus
    } as const
  })
}) {}
