import { Cause, Clock, Data, Duration, Effect, Either, Fiber, Layer, PubSub, Schedule, Stream } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { BackgroundStart } from "../jobs/BackgroundStart.js"
import { leaseHolder, Leases } from "../jobs/Leases.js"
import { MarketData } from "../market/MarketData.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { type Candle, type Exchange, timeframeMillis, Venues } from "../venues/Venue.js"
import { candleMillis, windowCoverage } from "./Coverage.js"
import type { MarketSample } from "./MarketSample.js"
import { candleMetrics, evaluateCondition, type WindowInputs, windowInputs } from "./Metrics.js"
import { describeFailure, sampleSymbols } from "./Sampler.js"
import { type SignalValue, Trigger } from "./Signal.js"
import { SignalEngine, type SignalEngineShape } from "./SignalEngine.js"
import { edgeKey, type NewTrigger, type SampleOutcome, SignalEngineRepo } from "./SignalEngineRepo.js"
import { type PoolRow, type SignalRow, SignalsRepo } from "./SignalsRepo.js"
import { WalletActivity } from "./WalletActivity.js"
import { defaultSizeChangeThreshold, walletEvents } from "./WalletEvents.js"

/** The samples kept per exchange and symbol: enough for the longest `time_window`. */
export const sampleRetention = timeframeMillis["1d"]

const leaseName = "signal-engine"

/** Another process took the engine over during the round: write nothing. */
class LeaseLost extends Data.TaggedError("LeaseLost") {}

/**
 * A pool's condition for one symbol: each enabled signal's reading, and the pool's verdict. A
 * signal that is not ready is never met, and the verdict is `decided` only when the ready signals
 * settle it whatever the others turn out to be: AND is unmet once a ready signal is unmet and met
 * once all are ready and met; OR is met once a ready signal is met and unmet once all are ready
 * and unmet. No enabled signal: decided, unmet.
 */
export const evaluatePool = (
  pool: Pick<PoolRow, "logic" | "signal_ids">,
  signals: ReadonlyMap<number, SignalRow>,
  inputs: WindowInputs,
  at: number
) => {
  const values: Array<SignalValue> = []
  for (const id of pool.signal_ids) {
    const signal = signals.get(id)
    if (signal === undefined || !signal.enabled) continue
    const condition = signal.trigger_condition
    values.push({
      signal_id: signal.id,
      signal_name: signal.signal_name,
      ...condition,
      ...evaluateCondition(condition, inputs, at)
    })
  }
  const ready = values.filter((v) => v.ready)
  const allReady = ready.length === values.length
  const met = values.length > 0 && (pool.logic === "AND" ? values.every((v) => v.met) : values.some((v) => v.met))
  const decided = pool.logic === "AND"
    ? allReady || ready.some((v) => !v.met)
    : allReady || ready.some((v) => v.met)
  return { values, met, decided }
}

const keyOf = (exchange: Exchange, symbol: string) => `${exchange}:${symbol}`

const poolFields = (pool: PoolRow) => ({
  pool_id: pool.id,
  user_id: pool.user_id,
  pool_name: pool.pool_name,
  exchange: pool.exchange,
  source_type: pool.source_type,
  logic: pool.logic
})

/**
 * The engine of this instance. Each round (every `signals.samplingInterval` while started, or on
 * `evaluateNow`) takes or renews the engine lease, samples every symbol of every enabled
 * `market_signals` pool and every wallet of every enabled `wallet_tracking` pool, and in one
 * transaction (which first checks that the lease is still its own) stores the samples and, per
 * pool and symbol, the new edge state and a trigger row on each edge from not met to met, and per
 * tracked wallet its positions and a trigger row per change since the last sync. The lease holder
 * keeps the sampled windows in memory, loaded from the database when it takes the engine over, so
 * a restart does not start blind; while a price metric's window is not covered by samples, it
 * also keeps the closed 1m candles (from `MarketData`) that complete it. A pool whose verdict
 * needs a window that is not ready is not decided that round, and its edge stays as it was.
 */
export const SignalEngineLive = Layer.scoped(
  SignalEngine,
  Effect.gen(function*() {
    const { signals: options } = yield* PlatformConfig
    const venues = yield* Venues
    const repo = yield* SignalEngineRepo
    const signalsRepo = yield* SignalsRepo
    const wallets = yield* WalletActivity
    const leases = yield* Leases
    const marketData = yield* MarketData
    const holder = leaseHolder()
    const interval = Duration.toMillis(options.samplingInterval)
    const events = yield* Effect.acquireRelease(PubSub.unbounded<Trigger>(), PubSub.shutdown)
    const lock = yield* Effect.makeSemaphore(1)

    // The windows, valid while this instance holds the lease without a break.
    const windows = new Map<string, Array<MarketSample>>()
    let holding = false
    let published = yield* dieOnStorageFailure(repo.lastTriggerId)

    const windowOf = (exchange: Exchange, symbol: string, at: number) =>
      Effect.gen(function*() {
        const key = keyOf(exchange, symbol)
        const known = windows.get(key)
        if (known !== undefined) return known
        const loaded = [...yield* repo.samples({ exchange, symbol, since: new Date(at - sampleRetention) })]
        windows.set(key, loaded)
        return loaded
      })

    // Closed 1m candles per exchange and symbol, while some candle metric's window is not covered by
    // samples: read from `from` on, then only the minutes closed since, so a round reads little.
    const candleCache = new Map<string, { from: number; until: number; bars: Array<Candle> }>()

    const readCandles = (exchange: Exchange, symbol: string, start: number, end: number) =>
      marketData.candles({ _tag: "Venue", exchange }, { symbol, timeframe: "1m", start, end }).pipe(
        Effect.tapError((error) => Effect.logDebug("Signal engine could not read candles", exchange, symbol, error)),
        Effect.orElseSucceed((): ReadonlyArray<Candle> => [])
      )

    /** The closed 1m candles of the symbol from `from` (on the minute grid) up to `at`, oldest first. */
    const candlesOf = (exchange: Exchange, symbol: string, from: number, at: number) =>
      Effect.gen(function*() {
        const key = keyOf(exchange, symbol)
        const end = Math.floor(at / candleMillis) * candleMillis
        let cached = candleCache.get(key)
        if (cached === undefined || from < cached.from) {
          const head = yield* readCandles(exchange, symbol, from, cached?.from ?? end)
          cached = {
            from,
            until: cached?.until ?? (head.length > 0 ? head[head.length - 1]!.time + candleMillis : from),
            bars: [...head, ...(cached?.bars ?? [])]
          }
          candleCache.set(key, cached)
        }
        if (cached.until < end) {
          // A minute the venue has no bar for yet is asked again next round.
          const tail = (yield* readCandles(exchange, symbol, cached.until, end)).filter((b) => b.time >= cached!.until)
          cached.bars.push(...tail)
          if (tail.length > 0) cached.until = tail[tail.length - 1]!.time + candleMillis
        }
        const keepFrom = cached.bars.findIndex((b) => b.time >= at - sampleRetention - candleMillis)
        if (keepFrom > 0) cached.bars.splice(0, keepFrom)
        return cached.bars.filter((b) => b.time >= from)
      })

    const marketPools = (pools: ReadonlyArray<PoolRow>) =>
      pools.filter((p) => p.source_type === "market_signals" && p.symbols.length > 0 && p.signal_ids.length > 0)

    const round = Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      const now = new Date(at)
      if (!(yield* leases.acquire(leaseName, holder, options.lease))) {
        holding = false
        windows.clear()
        candleCache.clear()
        return []
      }
      if (!holding) {
        windows.clear()
        candleCache.clear()
      }
      holding = true

      const enabled = yield* signalsRepo.enabledPools()
      // Nothing to sample, evaluate or write: an idle server's round is the lease and this read.
      if (enabled.length === 0) return []
      const pools = marketPools(enabled)
      const walletPools = enabled.filter((p) => p.source_type === "wallet_tracking")
      const signals = new Map(
        (yield* signalsRepo.signalsByIds([...new Set(pools.flatMap((p) => p.signal_ids))])).map((
          s
        ) => [s.id as number, s])
      )
      const wanted = new Map<Exchange, Set<string>>()
      for (const pool of pools) {
        const symbols = wanted.get(pool.exchange) ?? new Set()
        for (const symbol of pool.symbols) symbols.add(symbol)
        wanted.set(pool.exchange, symbols)
      }

      // Sample every wanted symbol; each sample's flows start where the last one ended, at most one
      // interval back, so a sample after a gap does not carry the whole gap's volume.
      const outcomes: Array<SampleOutcome> = []
      const fresh = new Map<string, WindowInputs>()
      for (const [exchange, symbols] of wanted) {
        const last = new Map<string, number>()
        for (const symbol of symbols) {
          const window = yield* windowOf(exchange, symbol, at)
          last.set(
            symbol,
            Math.max(at - interval, window.length > 0 ? window[window.length - 1]!.sampled_at : -Infinity)
          )
        }
        const results = yield* sampleSymbols(venues[exchange], [...symbols], at, (s) => last.get(s)!)
        for (const [symbol, result] of results) {
          if (Either.isRight(result)) {
            const key = keyOf(exchange, symbol)
            const inputs = windowInputs([...windows.get(key)!, result.right], interval, at)
            outcomes.push({ _tag: "Sampled", sample: result.right, covered_from: new Date(inputs.sampledFrom!) })
            fresh.set(key, inputs)
          } else {
            outcomes.push({ _tag: "Failed", exchange, symbol, error: describeFailure(result.left) })
          }
        }
      }

      // Candles stand in for samples where a candle metric's window is not covered by them yet.
      const candlesFrom = new Map<string, { exchange: Exchange; symbol: string; from: number }>()
      for (const pool of pools) {
        for (const symbol of pool.symbols) {
          const key = keyOf(pool.exchange, symbol)
          const inputs = fresh.get(key)
          if (inputs === undefined) continue
          for (const id of pool.signal_ids) {
            const condition = signals.get(id)?.trigger_condition
            if (condition === undefined || !signals.get(id)!.enabled || !candleMetrics.has(condition.metric)) continue
            if (windowCoverage(inputs.sampledFrom, condition.time_window, at).ready) continue
            const from = Math.floor((at - timeframeMillis[condition.time_window]) / candleMillis) * candleMillis
            candlesFrom.set(key, {
              exchange: pool.exchange,
              symbol,
              from: Math.min(from, candlesFrom.get(key)?.from ?? from)
            })
          }
        }
      }
      for (const key of candleCache.keys()) if (!candlesFrom.has(key)) candleCache.delete(key)
      yield* Effect.forEach(
        candlesFrom,
        ([key, { exchange, from, symbol }]) =>
          Effect.map(candlesOf(exchange, symbol, from, at), (candles) => {
            fresh.set(key, { ...fresh.get(key)!, candles })
          }),
        { concurrency: 4, discard: true }
      )

      const addresses = [
        ...new Set(walletPools.flatMap((p) => (p.source_config.addresses ?? []).map((a) => a.toLowerCase())))
      ]
      const snapshots = new Map(
        yield* Effect.forEach(
          addresses,
          (address) => Effect.map(Effect.either(wallets.snapshot(address)), (s) => [address, s] as const),
          {
            concurrency: 8
          }
        )
      )

      const fired = yield* repo.sql.withTransaction(Effect.gen(function*() {
        if (!(yield* leases.holds(leaseName, holder))) return yield* new LeaseLost()
        yield* repo.recordRound(outcomes, now)
        const fired: Array<Trigger> = []
        const fire = (trigger: Omit<NewTrigger, "fired_at">) =>
          Effect.map(repo.insertTrigger({ ...trigger, fired_at: now }), (id) => {
            fired.push(new Trigger({ ...trigger, id, fired_at: now.toISOString() }))
          })
        const verdicts = new Map<string, { pool: PoolRow; symbol: string; met: boolean; values: Array<SignalValue> }>()
        for (const pool of pools) {
          for (const symbol of pool.symbols) {
            const inputs = fresh.get(keyOf(pool.exchange, symbol))
            // No fresh data for the symbol this round: its edge stays as it was.
            if (inputs === undefined) continue
            const { decided, met, values } = evaluatePool(pool, signals, inputs, at)
            // Not decided (a window not ready): likewise, so a gap neither resets an edge nor makes one.
            if (decided) verdicts.set(edgeKey(pool.id, symbol), { pool, symbol, met, values })
          }
        }
        // Every pool's edges in one statement: a round's writes do not grow a statement per pool.
        const edges = yield* repo.setEdges(
          Array.from(verdicts.values(), ({ met, pool, symbol }) => ({ pool_id: pool.id, symbol, met })),
          now
        )
        for (const [key, { pool, symbol, values }] of verdicts) {
          if (edges.has(key)) yield* fire({ ...poolFields(pool), symbol, values, wallet_event: null })
        }
        for (const pool of walletPools) {
          const known = new Map((yield* repo.wallets(pool.id)).map((w) => [w.address, w]))
          for (const address of pool.source_config.addresses ?? []) {
            const snapshot = snapshots.get(address.toLowerCase())!
            if (Either.isLeft(snapshot)) {
              yield* repo.walletFailed(pool.id, address, snapshot.left.error)
              continue
            }
            // The first sync only sets the baseline: positions held before tracking began are not news.
            const last = known.get(address)?.last_sync_at
            if (last !== null && last !== undefined) {
              const threshold = pool.source_config.size_change_threshold ?? defaultSizeChangeThreshold
              for (
                const { event, symbol } of walletEvents(
                  address,
                  known.get(address)!.positions,
                  snapshot.right,
                  last.getTime(),
                  at,
                  threshold
                )
              ) {
                yield* fire({ ...poolFields(pool), symbol, values: [], wallet_event: event })
              }
            }
            yield* repo.walletSynced(pool.id, { address, positions: snapshot.right.positions, last_sync_at: now })
          }
        }
        yield* repo.prune(new Date(at - sampleRetention))
        return fired
      }))

      for (const [key, inputs] of fresh) {
        const window = windows.get(key)!
        window.push(inputs.history[inputs.history.length - 1]!)
        const keepFrom = window.findIndex((s) => s.sampled_at >= at - sampleRetention)
        if (keepFrom > 0) window.splice(0, keepFrom)
      }
      return fired
    }).pipe(
      Effect.catchTag("LeaseLost", () =>
        Effect.sync(() => {
          holding = false
          windows.clear()
          candleCache.clear()
          return []
        })),
      withRequestSpan("SignalEngine.round")
    )

    /** Publishes every trigger row this process has not published yet, oldest first. */
    const publishNew = Effect.gen(function*() {
      for (;;) {
        const rows = yield* repo.triggersAfter(published)
        if (rows.length === 0) return
        for (const row of rows) yield* PubSub.publish(events, new Trigger(row))
        published = rows[rows.length - 1]!.id
      }
    })

    const evaluateNow = lock.withPermits(1)(
      Effect.gen(function*() {
        const fired = yield* round
        yield* publishNew
        return fired
      })
    ).pipe(dieOnStorageFailure, withRequestSpan("SignalEngine.evaluateNow"))

    // A failed round (the database away, a defect) is logged; the next one tries again.
    const tick = evaluateNow.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning("Signal engine round failed", cause)
      )
    )

    const scope = yield* Effect.scope
    const backgroundStart = yield* BackgroundStart
    let running: Fiber.RuntimeFiber<unknown> | undefined
    const start = Effect.suspend(() =>
      running !== undefined
        ? Effect.void
        : Effect.map(
          Effect.forkIn(
            Effect.zipRight(backgroundStart, Effect.repeat(tick, Schedule.spaced(options.samplingInterval))),
            scope
          ),
          (fiber) => {
            running = fiber
          }
        )
    )
    // Hands the lease back at once, so another instance need not wait for it to run out.
    const stop = lock.withPermits(1)(Effect.suspend(() => {
      const fiber = running
      running = undefined
      const held = holding
      holding = false
      windows.clear()
      candleCache.clear()
      return Effect.zipRight(
        fiber === undefined ? Effect.void : Fiber.interrupt(fiber),
        held ? Effect.ignore(leases.release(leaseName, holder)) : Effect.void
      )
    }))
    yield* Effect.addFinalizer(() => stop)
    if (options.sampler) yield* start

    return {
      triggers: Stream.fromPubSub(events),
      subscribe: PubSub.subscribe(events),
      evaluateNow,
      samples: (exchange, symbol, since) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (at) => repo.samples({ exchange, symbol, since: new Date(since ?? at - sampleRetention) })
        ).pipe(
          dieOnStorageFailure,
          withRequestSpan("SignalEngine.samples", { attributes: { exchange, symbol } })
        ),
      start,
      stop
    } satisfies SignalEngineShape
  })
)
