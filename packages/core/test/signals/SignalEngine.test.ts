import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  type CurrentUserShape,
  DatabaseLive,
  evaluatePool,
  Leases,
  makeSimulatedVenue,
  MarketData,
  PlatformConfig,
  type PlatformOptions,
  type SessionId,
  SignalEngine,
  SignalEngineLive,
  SignalEngineRepo,
  Signals,
  SignalsRepo,
  simulatedWalletActivity,
  type StorageConfig,
  type Trigger,
  Unavailable,
  type UserId,
  type Venue,
  Venues,
  WalletActivity,
  type WalletSnapshot,
  windowInputs
} from "@trading-platform/core"
import { testOptions } from "@trading-platform/core/testing"
import { Chunk, Duration, Effect, Exit, Layer, Queue, Scope, TestClock } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { depthPool, poolOn } from "../support/SignalPools.js"

const start = Date.parse("2025-03-01T00:00:00Z")

/**
 * The simulated venue1, with a script: the bid side of the book is `bidScale` times the ask side
 * (so depth_ratio is exactly `bidScale`), symbols in `failing` fail their open interest, and
 * without `candles` the venue has no candles (a venue with no history to backfill from).
 */
const scriptedVenue = Effect.map(makeSimulatedVenue("venue1", 42), (venue) => {
  const script = { bidScale: 1, failing: new Set<string>(), candles: true }
  const scripted: Venue = {
    ...venue,
    candles: (query) => script.candles ? venue.candles(query) : Effect.succeed([]),
    depth: (symbol, levels) =>
      Effect.map(venue.depth(symbol, levels), (book) => ({
        bids: book.asks.map(([price, size]) => [price, size * script.bidScale] as const),
        asks: book.asks
      })),
    openInterest: (symbol) =>
      script.failing.has(symbol)
        ? Effect.fail(new Unavailable({ error: "venue1 is down for maintenance" }))
        : venue.openInterest(symbol)
  }
  return { script, scripted }
})

type Script = Effect.Effect.Success<typeof scriptedVenue>["script"]

/** The signal services and engine of one instance on the storage, with the scripted venue1. */
const instance = (
  storage: StorageConfig,
  script: Effect.Effect.Success<typeof scriptedVenue>,
  overrides: Partial<PlatformOptions> = {},
  wallets: WalletActivity["Type"] = simulatedWalletActivity(42)
) =>
  Layer.mergeAll(SignalEngineLive, Signals.Default).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SignalsRepo.Default,
        SignalEngineRepo.Default,
        Leases.Default,
        MarketData.Default,
        Layer.succeed(WalletActivity, wallets)
      )
    ),
    Layer.provideMerge(
      Layer.effect(
        Venues,
        Effect.map(makeSimulatedVenue("venue2", 42), (venue2) => ({ venue1: script.scripted, venue2 }))
      )
    ),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(PlatformConfig.layer(testOptions(storage, overrides)))
  )

/** A user row to own signals (the engine does not care how users came to be). */
const newUser = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const name = `engine_${Math.random().toString(36).slice(2, 10)}`
  const [row] = yield* sql<{ id: number }>`
    INSERT INTO users (email, username, password_hash, created_at, updated_at)
    VALUES (${`${name}@example.com`}, ${name}, 'x', now(), now()) RETURNING id`
  return {
    id: row!.id as UserId,
    email: `${name}@example.com`,
    username: name,
    created_at: new Date().toISOString(),
    sessionId: 1 as SessionId
  } satisfies CurrentUserShape
})

/** One round `interval` after the last, with the book scripted to `bidScale`; answers the triggers fired. */
const roundWith = (script: Script, bidScale: number) =>
  Effect.gen(function*() {
    script.bidScale = bidScale
    yield* TestClock.adjust(Duration.seconds(15))
    return yield* Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)
  })

const memory: StorageConfig = { kind: "pglite", dataDir: "memory://" }

/** `count` rounds 15 s apart; answers how many triggers each fired. */
const rounds = (count: number) =>
  Effect.gen(function*() {
    const engine = yield* SignalEngine
    const fired: Array<number> = []
    for (let i = 0; i < count; i++) {
      yield* TestClock.adjust(Duration.seconds(15))
      fired.push((yield* engine.evaluateNow).length)
    }
    return fired
  })

/** The stored edge of the pool on BTC: whether it was met at its last decided evaluation; undefined if never. */
const edgeOf = (poolId: number) =>
  Effect.map(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ met: boolean }>`SELECT met FROM signal_pool_edges WHERE pool_id = ${poolId} AND symbol = 'BTC'`),
    (rows) =>
      rows[0]?.met
  )

/** Runs `body` on a fresh in-memory engine over a scripted venue, with the clock at `start`. */
const onScriptedEngine = <A, E, R>(
  body: (venue: Effect.Effect.Success<typeof scriptedVenue>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start)
    const venue = yield* scriptedVenue
    const context = yield* Layer.build(instance(memory, venue))
    return yield* body(venue).pipe(Effect.provide(context))
  })

describe("signal engine", () => {
  it.scoped("fires on the edge from not met to met per pool and symbol: met, met, unmet, met fires twice", () =>
    onScriptedEngine((venue) =>
      Effect.gen(function*() {
        const caller = yield* newUser
        const pool = yield* depthPool(caller)
        const fired: Array<number> = []
        for (const scale of [2, 3, 0.5, 2]) fired.push((yield* roundWith(venue.script, scale)).length)
        expect(fired).toEqual([1, 0, 0, 1])
        const log = yield* Effect.flatMap(Signals, (s) => s.triggers(caller, { limit: 50, offset: 0 }))
        expect(log.triggers).toHaveLength(2)
        expect(log.next_offset).toBeNull()
        // Newest first, with the time of the round and the value that fired it.
        expect(log.triggers.map((t) => t.fired_at)).toEqual([
          new Date(start + 60_000).toISOString(),
          new Date(start + 15_000).toISOString()
        ])
        expect(log.triggers[0]).toMatchObject({
          pool_id: pool.id,
          user_id: caller.id,
          symbol: "BTC",
          logic: "AND",
          wallet_event: null
        })
        expect(log.triggers[0]!.values).toEqual([
          expect.objectContaining({ metric: "depth_ratio", operator: "gt", threshold: 1, met: true })
        ])
        expect(log.triggers[0]!.values[0]!.value).toBeCloseTo(2)
        expect(log.triggers[1]!.values[0]!.value).toBeCloseTo(2)
      })
    ))

  it.scoped("OR fires when one signal holds, AND only when all do; a disabled signal does not count", () =>
    onScriptedEngine((venue) =>
      Effect.gen(function*() {
        const caller = yield* newUser
        const signals = yield* Signals
        const make = (threshold: number, enabled = true) =>
          Effect.map(
            signals.create(caller, {
              signal_name: `depth over ${threshold}`,
              exchange: "venue1",
              trigger_condition: { metric: "depth_ratio", operator: "gt", threshold, time_window: "1m" },
              enabled
            }),
            (s) => s.id
          )
        const [low, high, off] = [yield* make(1), yield* make(5), yield* make(100, false)]
        const pool = (logic: "AND" | "OR", ids: Array<typeof low>) =>
          signals.createPool(caller, {
            pool_name: logic,
            exchange: "venue1",
            source_type: "market_signals",
            source_config: {},
            signal_ids: ids,
            symbols: ["ETH"],
            logic,
            enabled: true
          })
        const and = yield* pool("AND", [low, high, off])
        const or = yield* pool("OR", [low, high])
        const first = yield* roundWith(venue.script, 2)
        expect(first.map((t) => t.pool_id)).toEqual([or.id])
        expect(first[0]!.values.map((v) => v.met)).toEqual([true, false])
        const second = yield* roundWith(venue.script, 6)
        // The AND pool's disabled signal is left out: both enabled ones hold.
        expect(second.map((t) => t.pool_id)).toEqual([and.id])
        expect(second[0]!.values.map((v) => v.signal_id)).toEqual([low, high])
      })
    ))

  it.scoped("a venue failing for one symbol never stops the others; failures are counted in the pool status", () =>
    onScriptedEngine((venue) =>
      Effect.gen(function*() {
        const caller = yield* newUser
        const pool = yield* depthPool(caller, ["BTC", "ETH"])
        venue.script.failing.add("ETH")
        const fired = yield* roundWith(venue.script, 2)
        yield* roundWith(venue.script, 2)
        expect(fired.map((t) => t.symbol)).toEqual(["BTC"])
        const engine = yield* SignalEngine
        expect(yield* engine.samples("venue1", "BTC")).toHaveLength(2)
        expect(yield* engine.samples("venue1", "ETH")).toHaveLength(0)
        const status = yield* Effect.flatMap(Signals, (s) => s.poolStatus(caller))
        expect(status.pools).toEqual([{
          pool_id: pool.id,
          pool_name: "depth",
          enabled: true,
          symbol_count: 2,
          last_sampled_at: new Date(start + 30_000).toISOString(),
          errors: 2,
          last_error: "venue1 is down for maintenance",
          // BTC's two samples cover 30 s of the minute; ETH has none.
          symbols: [
            {
              symbol: "BTC",
              last_sampled_at: new Date(start + 30_000).toISOString(),
              windows: [{ time_window: "1m", covered_from: new Date(start).toISOString(), coverage: 0.5, ready: false }]
            },
            {
              symbol: "ETH",
              last_sampled_at: null,
              windows: [{ time_window: "1m", covered_from: null, coverage: 0, ready: false }]
            }
          ]
        }])
        // Once ETH answers again, its edge fires on its own.
        venue.script.failing.clear()
        expect((yield* roundWith(venue.script, 2)).map((t) => t.symbol)).toEqual(["ETH"])
      })
    ))

  it.scoped(
    "a restart keeps edges and windows: met before the restart does not fire again after it",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const dataDir = mkdtempSync(join(tmpdir(), "signals-restart-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        const storage: StorageConfig = { kind: "pglite", dataDir }
        const venue = yield* scriptedVenue
        const first = yield* Scope.make()
        const caller = yield* Effect.gen(function*() {
          const caller = yield* newUser
          yield* depthPool(caller)
          expect((yield* roundWith(venue.script, 2)).length).toBe(1)
          return caller
        }).pipe(Effect.provide(yield* Layer.buildWithScope(instance(storage, venue), first)))
        yield* Scope.close(first, Exit.void)

        const second = yield* Layer.build(instance(storage, venue))
        yield* Effect.gen(function*() {
          const engine = yield* SignalEngine
          // Still met after the restart: no new edge.
          expect((yield* roundWith(venue.script, 3)).length).toBe(0)
          // The window spans the restart.
          expect((yield* engine.samples("venue1", "BTC")).map((s) => s.sampled_at)).toEqual([
            start + 15_000,
            start + 30_000
          ])
          expect((yield* roundWith(venue.script, 0.5)).length).toBe(0)
          expect((yield* roundWith(venue.script, 2)).length).toBe(1)
          const log = yield* Effect.flatMap(Signals, (s) => s.triggers(caller, { limit: 50, offset: 0 }))
          expect(log.triggers).toHaveLength(2)
        }).pipe(Effect.provide(second))
      }),
    { timeout: 60_000 }
  )

  it.scoped("with the sampler on, rounds run on the clock and triggers reach subscribers without real waiting", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const venue = yield* scriptedVenue
      venue.script.bidScale = 0.5
      const context = yield* Layer.build(
        instance(memory, venue, {
          signals: { sampler: true, samplingInterval: Duration.seconds(15), lease: Duration.seconds(60) }
        })
      )
      yield* Effect.gen(function*() {
        const engine = yield* SignalEngine
        const events = yield* engine.subscribe
        const caller = yield* newUser
        const pool = yield* depthPool(caller)
        const samples = () => Effect.map(engine.samples("venue1", "BTC"), (s) => s.length)
        // The first round ran when the engine started, before the pool existed.
        expect(yield* samples()).toBe(0)
        yield* TestClock.adjust(Duration.seconds(15))
        expect(yield* samples()).toBe(1)
        venue.script.bidScale = 2
        yield* TestClock.adjust(Duration.seconds(15))
        expect(yield* samples()).toBe(2)
        const fired: Trigger = yield* Queue.take(events)
        expect(fired).toMatchObject({
          pool_id: pool.id,
          symbol: "BTC",
          fired_at: new Date(start + 30_000).toISOString()
        })
        yield* TestClock.adjust(Duration.seconds(45))
        expect(yield* samples()).toBe(5)
        expect(Chunk.size(yield* Queue.takeAll(events))).toBe(0)
        // Stopped, nothing samples; started again, rounds resume.
        yield* engine.stop
        yield* TestClock.adjust(Duration.seconds(60))
        expect(yield* samples()).toBe(5)
        yield* engine.start
        yield* TestClock.adjust(Duration.seconds(15))
        expect(yield* samples()).toBe(7)
      }).pipe(Effect.provide(context))
    }))

  it.scoped("wallet tracking: the first sync is the baseline, then opened, resized, flipped, closed and liquidated positions fire", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const venue = yield* scriptedVenue
      const wallet = `0x${"ab".repeat(20)}`
      let snapshot: WalletSnapshot = { positions: [{ symbol: "BTC", size: 1, entry_price: 60_000 }], liquidations: [] }
      let down = false
      const scripted = {
        snapshot: () => down ? Effect.fail(new Unavailable({ error: "venue1 is down" })) : Effect.sync(() => snapshot)
      }
      const context = yield* Layer.build(instance(memory, venue, {}, scripted))
      yield* Effect.gen(function*() {
        const caller = yield* newUser
        const signals = yield* Signals
        const pool = yield* signals.createPool(caller, {
          pool_name: "whales",
          exchange: "venue1",
          source_type: "wallet_tracking",
          source_config: { addresses: [wallet], size_change_threshold: 0.1 },
          signal_ids: [],
          symbols: [],
          logic: "OR",
          enabled: true
        })
        const kinds = (fired: ReadonlyArray<Trigger>) => fired.map((t) => `${t.symbol}:${t.wallet_event?.kind}`)
        expect(kinds(yield* roundWith(venue.script, 1))).toEqual([])
        snapshot = {
          positions: [{ symbol: "BTC", size: 1.05, entry_price: 60_000 }, {
            symbol: "ETH",
            size: -3,
            entry_price: 3_000
          }],
          liquidations: []
        }
        const opened = yield* roundWith(venue.script, 1)
        expect(kinds(opened)).toEqual(["ETH:opened"])
        expect(opened[0]).toMatchObject({ pool_id: pool.id, source_type: "wallet_tracking", values: [] })
        expect(opened[0]!.wallet_event).toEqual({
          address: wallet,
          kind: "opened",
          previous_size: 0,
          size: -3,
          price: 3_000,
          time: new Date(start + 30_000).toISOString()
        })
        snapshot = {
          positions: [{ symbol: "BTC", size: 1.5, entry_price: 61_000 }, {
            symbol: "ETH",
            size: 2,
            entry_price: 3_100
          }],
          liquidations: []
        }
        expect(kinds(yield* roundWith(venue.script, 1))).toEqual(["BTC:size_changed", "ETH:flipped"])
        snapshot = { positions: [], liquidations: [{ symbol: "ETH", time: start + 50_000, size: 2, price: 2_500 }] }
        expect(kinds(yield* roundWith(venue.script, 1))).toEqual(["ETH:liquidated", "BTC:closed"])
        // Reported once: the next sync is after it.
        expect(kinds(yield* roundWith(venue.script, 1))).toEqual([])
        down = true
        yield* roundWith(venue.script, 1)
        const status = yield* signals.walletStatus(caller)
        expect(status).toEqual({
          enabled: true,
          last_sync_at: new Date(start + 75_000).toISOString(),
          tracked_wallets: 1,
          errors: 1
        })
      }).pipe(Effect.provide(context))
    }))

  it.scoped("simulated wallets are a pure function of seed, address and time, and change over time", () =>
    Effect.gen(function*() {
      const wallet = `0x${"12".repeat(20)}`
      const a = simulatedWalletActivity(42)
      const b = simulatedWalletActivity(42)
      yield* TestClock.setTime(start)
      expect(yield* a.snapshot(wallet)).toEqual(yield* b.snapshot(wallet.toUpperCase().replace("0X", "0x")))
      const seen: Array<WalletSnapshot> = []
      for (let i = 0; i < 24; i++) {
        seen.push(yield* a.snapshot(wallet))
        yield* TestClock.adjust(Duration.minutes(5))
      }
      expect(new Set(seen.map((s) => JSON.stringify(s.positions))).size).toBeGreaterThan(5)
      expect(seen.some((s) => s.liquidations.length > 0)).toBe(true)
      expect(yield* simulatedWalletActivity(7).snapshot(wallet)).not.toEqual(yield* a.snapshot(wallet))
    }))

  it.scoped(
    "a new pool on a 1h volume window does not fire before its samples cover the hour, then fires once",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const venue = yield* scriptedVenue
        // A venue with no candles: only samples can complete the window.
        venue.script.candles = false
        const context = yield* Layer.build(instance(memory, venue))
        yield* Effect.gen(function*() {
          const caller = yield* newUser
          const pool = yield* poolOn(caller, { metric: "volume", operator: "gt", threshold: 0, time_window: "1h" })
          // The first sample (at 15 s) covers from 0 s, so the window at 3,600 s, the 240th round, is the first complete one.
          const fired = yield* rounds(240)
          expect(fired.slice(0, 239).every((n) => n === 0)).toBe(true)
          expect(yield* edgeOf(pool.id)).toBe(true)
          expect(fired[239]).toBe(1)
          const [trigger] = (yield* Effect.flatMap(Signals, (s) =>
            s.triggers(caller, { limit: 50, offset: 0 }))).triggers
          expect(trigger).toMatchObject({ pool_id: pool.id, fired_at: new Date(start + 3_600_000).toISOString() })
          // The hour's taker flows: every sample's, the first one's included (its flows cover the 15 s before it).
          const samples = yield* Effect.flatMap(SignalEngine, (engine) => engine.samples("venue1", "BTC"))
          expect(samples).toHaveLength(240)
          expect(trigger!.values[0]).toMatchObject({ metric: "volume", met: true, ready: true, reason: null })
          const flows = samples.reduce((total, s) => total + s.taker_buy_volume + s.taker_sell_volume, 0)
          expect(trigger!.values[0]!.value! / flows).toBeCloseTo(1, 12)
        }).pipe(Effect.provide(context))
      }),
    { timeout: 120_000 }
  )

  it.scoped("with candles, a new pool on 1h price_change and volume windows fires at its first round, from the candles and the sample", () =>
    onScriptedEngine((venue) =>
      Effect.gen(function*() {
        const caller = yield* newUser
        const change = yield* poolOn(caller, {
          metric: "price_change",
          operator: "abs_lt",
          threshold: 1e6,
          time_window: "1h"
        })
        const volume = yield* poolOn(caller, { metric: "volume", operator: "gt", threshold: 0, time_window: "1h" })
        const flows = yield* poolOn(caller, { metric: "cvd", operator: "abs_lt", threshold: 1e12, time_window: "1h" })
        yield* TestClock.adjust(Duration.seconds(15))
        const fired = yield* Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)
        // cvd cannot come from candles: not ready, so not fired, and no edge recorded.
        expect(fired.map((t) => t.pool_id).sort()).toEqual([change.id, volume.id].sort())
        expect(yield* edgeOf(flows.id)).toBeUndefined()
        // From the open of the minute the window starts in (the minute before `start`) to the sample's price.
        const at = start + 15_000
        const [sample] = yield* Effect.flatMap(SignalEngine, (engine) => engine.samples("venue1", "BTC"))
        const bars = yield* venue.scripted.candles({
          symbol: "BTC",
          timeframe: "1m",
          start: start - 3_600_000,
          end: at
        })
        expect(bars).toHaveLength(60)
        const value = (poolId: number) => fired.find((t) => t.pool_id === poolId)!.values[0]!.value
        expect(value(change.id)).toBeCloseTo((sample!.price / bars[0]!.open - 1) * 100, 9)
        // The candles' coins at their close, then the sample's flows (since `start`, after the last closed minute).
        const quote = bars.reduce((total, b) => total + b.volume * b.close, 0)
        const sampled = sample!.taker_buy_volume + sample!.taker_sell_volume
        expect(value(volume.id)! / (quote + sampled)).toBeCloseTo(1, 12)
      })
    ))

  it.scoped("a trigger logged before values had ready and reason reads as ready, with no reason", () =>
    onScriptedEngine(() =>
      Effect.gen(function*() {
        const caller = yield* newUser
        const pool = yield* depthPool(caller)
        const sql = yield* SqlClient.SqlClient
        const old = {
          signal_id: pool.signal_ids[0],
          signal_name: "bids outweigh asks",
          metric: "depth_ratio",
          operator: "gt",
          threshold: 1,
          time_window: "1m",
          value: 2,
          met: true
        }
        yield* sql`
          INSERT INTO signal_triggers (pool_id, user_id, symbol, fired_at, pool_name, exchange, source_type, logic, signal_values)
          VALUES (${pool.id}, ${caller.id}, 'BTC', ${new Date(start)}, 'depth', 'venue1', 'market_signals', 'AND', ${
          JSON.stringify([old])
        })`
        const log = yield* Effect.flatMap(Signals, (s) => s.triggers(caller, { limit: 50, offset: 0 }))
        expect(log.triggers[0]!.values).toEqual([{ ...old, ready: true, reason: null }])
      })
    ))

  it.scoped(
    "a sampling gap makes a 5m window not ready until the samples cover it again; it neither fires nor resets the edge",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const venue = yield* scriptedVenue
        venue.script.bidScale = 0.5
        const context = yield* Layer.build(instance(memory, venue))
        yield* Effect.gen(function*() {
          const caller = yield* newUser
          const signals = yield* Signals
          // order_imbalance is (bid - ask) / (bid + ask) on average: -1/3 at bidScale 0.5, 1/3 at 2.
          const pool = yield* poolOn(caller, {
            metric: "order_imbalance",
            operator: "gt",
            threshold: 0,
            time_window: "5m"
          })
          const windowStatus = Effect.map(signals.poolStatus(caller), (s) => s.pools[0]!.symbols[0]!.windows[0]!)
          expect(yield* rounds(19)).toEqual(Array(19).fill(0))
          expect(yield* edgeOf(pool.id)).toBeUndefined()
          expect(yield* windowStatus).toEqual({
            time_window: "5m",
            covered_from: new Date(start).toISOString(),
            coverage: 285 / 300,
            ready: false
          })
          // The 20th round's window is covered: decided, and not met.
          expect(yield* rounds(1)).toEqual([0])
          expect(yield* edgeOf(pool.id)).toBe(false)
          expect(yield* windowStatus).toMatchObject({ coverage: 1, ready: true })

          // Ten minutes without a round, and the book turns: met, but the window has a hole.
          venue.script.bidScale = 2
          yield* TestClock.adjust(Duration.minutes(10))
          expect(yield* windowStatus).toEqual({ time_window: "5m", covered_from: null, coverage: 0, ready: false })
          expect(yield* rounds(19)).toEqual(Array(19).fill(0))
          expect(yield* edgeOf(pool.id)).toBe(false)
          const gapEnd = start + 300_000 + 600_000
          expect(yield* windowStatus).toEqual({
            time_window: "5m",
            covered_from: new Date(gapEnd).toISOString(),
            coverage: 285 / 300,
            ready: false
          })
          const dryRun = yield* signals.evaluate(caller, pool.signal_ids[0]!, "BTC")
          expect(dryRun).toMatchObject({ value: null, met: false, ready: false })
          expect(dryRun.reason).toMatch(/^not_ready: /)
          // Covered again: the edge from not met to met on ready data fires once.
          expect(yield* rounds(2)).toEqual([1, 0])
          expect(yield* edgeOf(pool.id)).toBe(true)

          // Another gap while met: once covered again, still met, so no second trigger.
          yield* TestClock.adjust(Duration.minutes(10))
          expect((yield* rounds(25)).every((n) => n === 0)).toBe(true)
          expect(yield* edgeOf(pool.id)).toBe(true)
          const log = yield* signals.triggers(caller, { limit: 50, offset: 0 })
          expect(log.triggers.map((t) => t.fired_at)).toEqual([new Date(gapEnd + 300_000).toISOString()])
        }).pipe(Effect.provide(context))
      }),
    { timeout: 60_000 }
  )
})

describe("a pool's verdict with signals that are not ready", () => {
  const at = start
  // Two samples 15 s apart: a 1m depth_ratio is ready (2 at bidScale 2), a 5m order_imbalance is not.
  const book = (bid: number) => ({
    exchange: "venue1" as const,
    symbol: "BTC",
    price: 100,
    volume_24h: 0,
    open_interest: 1,
    funding_rate: 0,
    taker_buy_volume: 0,
    taker_sell_volume: 0,
    bid_depth: bid,
    ask_depth: 100
  })
  const inputs = (bid: number) =>
    windowInputs([{ ...book(bid), sampled_at: at - 15_000 }, { ...book(bid), sampled_at: at }], 15_000, at)
  const signal = (id: number, metric: "depth_ratio" | "order_imbalance", time_window: "1m" | "5m") =>
    [id, {
      id,
      user_id: 1,
      exchange: "venue1",
      signal_name: metric,
      description: null,
      trigger_condition: {
        metric,
        operator: metric === "depth_ratio" ? "gt" : "gt",
        threshold: metric === "depth_ratio" ? 1 : 0,
        time_window
      },
      enabled: true,
      created_at: "",
      updated_at: ""
    }] as const
  const signals = new Map([signal(1, "depth_ratio", "1m"), signal(2, "order_imbalance", "5m")]) as any
  const verdict = (logic: "AND" | "OR", bid: number) => {
    const { decided, met, values } = evaluatePool({ logic, signal_ids: [1, 2] as any }, signals, inputs(bid), at)
    expect(values.map((v) => v.ready)).toEqual([true, false])
    return { decided, met }
  }

  it("AND: a ready unmet signal decides unmet; a ready met one waits for the rest", () => {
    expect(verdict("AND", 50)).toEqual({ decided: true, met: false })
    expect(verdict("AND", 200)).toEqual({ decided: false, met: false })
  })

  it("OR: a ready met signal decides met; a ready unmet one waits for the rest", () => {
    expect(verdict("OR", 200)).toEqual({ decided: true, met: true })
    expect(verdict("OR", 50)).toEqual({ decided: false, met: false })
  })
})
