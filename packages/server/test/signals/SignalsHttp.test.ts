import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { PlatformLive, SignalEngine } from "@trading-platform/core"
import { TestConfig, type TestStorage, testStorages } from "@trading-platform/core/testing"
import { ApiLive, requestContext } from "@trading-platform/server"
import { Clock, Duration, Effect, Layer, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import { call, expectError, signUp } from "../support/TestServer.js"

/** The real server on a random port, with the platform's services (the engine among them) left in reach of the tests. */
const SignalsServer = (storage: TestStorage) =>
  HttpApiBuilder.serve(requestContext).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ApiLive),
    Layer.provideMerge(PlatformLive),
    Layer.provideMerge(TestConfig(storage))
  )

/**
 * One sampling round 15 s after the last; answers the triggers fired. The test clock starts at
 * the epoch and only moves forward, so session tokens stay valid.
 */
const round = Effect.zipRight(
  TestClock.adjust(Duration.seconds(15)),
  Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)
)

const condition = { metric: "volume", operator: "gt", threshold: 0, time_window: "1m" } as const

const createSignal = (token: string, body: Record<string, unknown> = {}) =>
  call("POST", "/api/signals", { token, body: { signal_name: "any trading", trigger_condition: condition, ...body } })

const createPool = (token: string, body: Record<string, unknown>) =>
  call("POST", "/api/signals/pools", {
    token,
    body: { pool_name: "majors", symbols: ["BTC", "ETH"], logic: "OR", ...body }
  })

/** A user with a signal and a pool over it. */
const userWithPool = Effect.gen(function*() {
  const user = yield* signUp("signals")
  const signal = yield* createSignal(user.token)
  expect(signal.status).toBe(201)
  const pool = yield* createPool(user.token, { signal_ids: [signal.body.id] })
  expect(pool.status).toBe(201)
  return { ...user, signalId: signal.body.id as number, poolId: pool.body.id as number }
})

const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`signals over ${storage.name}`, () => {
    layer(SignalsServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("every signals endpoint without a token answers 401 unauthorized", () =>
        Effect.gen(function*() {
          for (
            const [method, path] of [
              ["GET", "/api/signals"],
              ["POST", "/api/signals"],
              ["GET", "/api/signals/1"],
              ["PUT", "/api/signals/1"],
              ["DELETE", "/api/signals/1"],
              ["POST", "/api/signals/1/evaluate"],
              ["POST", "/api/signals/pools"],
              ["PUT", "/api/signals/pools/1"],
              ["DELETE", "/api/signals/pools/1"],
              ["GET", "/api/signals/triggers"],
              ["GET", "/api/signals/wallet-tracking/status"],
              ["GET", "/api/sampling/pool-status"]
            ] as const
          ) expectError(yield* call(method, path, method === "GET" ? {} : { body: {} }), 401, "unauthorized")
        }))

      it.effect("POST /api/signals answers 201 with the signal; GET /api/signals lists only the caller's pools and signals", () =>
        Effect.gen(function*() {
          const { poolId, signalId, token } = yield* userWithPool
          const other = yield* userWithPool
          const listing = yield* call("GET", "/api/signals", { token })
          expect(listing.status).toBe(200)
          expect(listing.body.signals).toEqual([{
            id: signalId,
            exchange: "venue1",
            signal_name: "any trading",
            trigger_condition: condition,
            description: null,
            enabled: true,
            created_at: expect.any(String),
            updated_at: expect.any(String)
          }])
          expect(listing.body.pools).toEqual([{
            id: poolId,
            exchange: "venue1",
            pool_name: "majors",
            source_type: "market_signals",
            source_config: {},
            signal_ids: [signalId],
            symbols: ["BTC", "ETH"],
            logic: "OR",
            enabled: true,
            created_at: expect.any(String)
          }])
          expect(listing.body.pools.map((p: any) => p.id)).not.toContain(other.poolId)
        }))

      it.effect("a trigger_condition with an unknown metric, operator or window, or a non-finite threshold answers 400 naming the field", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const bad = (field: string, value: unknown) =>
            Effect.gen(function*() {
              const reply = yield* createSignal(token, { trigger_condition: { ...condition, [field]: value } })
              expectError(reply, 400, "invalid_input")
              expect(reply.body.issues.map((i: any) => i.path)).toContain(`trigger_condition.${field}`)
            })
          yield* bad("metric", "moon_phase")
          yield* bad("operator", "approximately")
          yield* bad("time_window", "2h")
          yield* bad("threshold", "1")
          // JSON has no Infinity, but 1e999 parses to it.
          const infinite = yield* call("POST", "/api/signals", {
            token,
            raw:
              `{"signal_name":"x","trigger_condition":{"metric":"oi","operator":"gt","threshold":1e999,"time_window":"1h"}}`,
            headers: { "content-type": "application/json" }
          })
          expectError(infinite, 400, "invalid_input")
          expect(infinite.body.issues.map((i: any) => i.path)).toContain("trigger_condition.threshold")
          const missing = yield* call("POST", "/api/signals", { token, body: { signal_name: "  " } })
          expectError(missing, 400, "invalid_input")
          expect(missing.body.issues.map((i: any) => i.path).sort()).toEqual(["signal_name", "trigger_condition"])
          expectError(yield* createSignal(token, { exchange: "venue9" }), 400, "invalid_input")
        }))

      it.effect("GET and PUT /api/signals/{id} answer the signal; another user's answers 403, an unknown one 404, a bad id 400", () =>
        Effect.gen(function*() {
          const { signalId, token } = yield* userWithPool
          const intruder = yield* signUp()
          const got = yield* call("GET", `/api/signals/${signalId}`, { token })
          expect(got.status).toBe(200)
          expect(got.body.id).toBe(signalId)
          const updated = yield* call("PUT", `/api/signals/${signalId}`, {
            token,
            body: {
              signal_name: "selling pressure",
              description: "cvd below zero",
              trigger_condition: { metric: "cvd", operator: "lt", threshold: 0, time_window: "5m" },
              enabled: false
            }
          })
          expect(updated.status).toBe(200)
          expect(updated.body).toMatchObject({
            signal_name: "selling pressure",
            description: "cvd below zero",
            enabled: false
          })
          expect(updated.body.trigger_condition).toEqual({
            metric: "cvd",
            operator: "lt",
            threshold: 0,
            time_window: "5m"
          })
          const path = `/api/signals/${signalId}`
          expectError(yield* call("GET", path, { token: intruder.token }), 403, "forbidden")
          expectError(
            yield* call("PUT", path, {
              token: intruder.token,
              body: { signal_name: "x", trigger_condition: condition }
            }),
            403,
            "forbidden"
          )
          expectError(yield* call("DELETE", path, { token: intruder.token }), 403, "forbidden")
          expectError(yield* call("GET", "/api/signals/999999", { token }), 404, "not_found")
          expectError(
            yield* call("PUT", "/api/signals/999999", {
              token,
              body: { signal_name: "x", trigger_condition: condition }
            }),
            404,
            "not_found"
          )
          expectError(yield* call("DELETE", "/api/signals/999999", { token }), 404, "not_found")
          expectError(yield* call("GET", "/api/signals/abc", { token }), 400, "invalid_input")
          // A signal in a venue1 pool cannot move to venue2.
          expectError(
            yield* call("PUT", path, {
              token,
              body: { signal_name: "x", exchange: "venue2", trigger_condition: condition }
            }),
            422,
            "exchange_mismatch"
          )
        }))

      it.effect("DELETE /api/signals/{id} of a signal in a pool answers 409 signal_in_use naming the pools; once out of them, 204", () =>
        Effect.gen(function*() {
          const { poolId, signalId, token } = yield* userWithPool
          const inUse = yield* call("DELETE", `/api/signals/${signalId}`, { token })
          expectError(inUse, 409, "signal_in_use")
          expect(inUse.body.pool_ids).toEqual([poolId])
          const emptied = yield* call("PUT", `/api/signals/pools/${poolId}`, { token, body: { signal_ids: [] } })
          expect(emptied.status).toBe(200)
          expect((yield* call("DELETE", `/api/signals/${signalId}`, { token })).status).toBe(204)
          expectError(yield* call("GET", `/api/signals/${signalId}`, { token }), 404, "not_found")
        }))

      it.effect("POST /api/signals/pools checks signals, exchange and symbols: 404 for ids not the caller's, 422 for another exchange or an unlisted symbol", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const other = yield* userWithPool
          const mine = (yield* createSignal(token)).body.id
          const onVenue2 = (yield* createSignal(token, { exchange: "venue2" })).body.id
          const foreign = yield* createPool(token, { signal_ids: [mine, other.signalId] })
          const missing = yield* createPool(token, { signal_ids: [mine, 999999] })
          expectError(foreign, 404, "not_found")
          expectError(missing, 404, "not_found")
          // Another user's id answers exactly like a missing one.
          expect(foreign.body.error.replace(String(other.signalId), "N")).toBe(
            missing.body.error.replace("999999", "N")
          )
          expectError(yield* createPool(token, { signal_ids: [mine, onVenue2] }), 422, "exchange_mismatch")
          const unlisted = yield* createPool(token, { signal_ids: [mine], symbols: ["BTC", "NOTACOIN"] })
          expectError(unlisted, 422, "symbol_not_listed")
          expect(unlisted.body.symbols).toEqual(["NOTACOIN"])
          expectError(yield* createPool(token, { signal_ids: [mine], logic: "XOR" }), 400, "invalid_input")
          expectError(yield* createPool(token, { signal_ids: [mine], source_type: "rumours" }), 400, "invalid_input")
          const venue2 = yield* createPool(token, { exchange: "venue2", signal_ids: [onVenue2], symbols: ["SOL"] })
          expect(venue2.status).toBe(201)
          expect(venue2.body).toMatchObject({
            exchange: "venue2",
            signal_ids: [onVenue2],
            symbols: ["SOL"],
            logic: "OR"
          })
          // Replacing the signal without naming its exchange keeps it on venue2.
          const replaced = yield* call("PUT", `/api/signals/${onVenue2}`, {
            token,
            body: { signal_name: "renamed", trigger_condition: condition }
          })
          expect(replaced.status).toBe(200)
          expect(replaced.body).toMatchObject({ signal_name: "renamed", exchange: "venue2" })
        }))

      it.effect("wallet_tracking pools need 1 to 50 well-formed addresses and venue1", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const wallet = (source_config: unknown, extra: Record<string, unknown> = {}) =>
            createPool(token, { source_type: "wallet_tracking", symbols: [], source_config, ...extra })
          const none = yield* wallet({})
          expectError(none, 400, "invalid_input")
          expect(none.body.issues.map((i: any) => i.path)).toEqual(["source_config.addresses"])
          const malformed = yield* wallet({ addresses: ["0x1234"] })
          expectError(malformed, 400, "invalid_input")
          expect(malformed.body.issues[0].path).toBe("source_config.addresses.0")
          expectError(
            yield* wallet({ addresses: Array.from({ length: 51 }, (_, i) => address(i + 1)) }),
            400,
            "invalid_input"
          )
          expectError(yield* wallet({ addresses: [address(1)] }, { exchange: "venue2" }), 422, "exchange_mismatch")
          const ok = yield* wallet({ addresses: Array.from({ length: 50 }, (_, i) => address(i + 1)) })
          expect(ok.status).toBe(201)
          expect(ok.body.source_config.addresses).toHaveLength(50)
        }))

      it.effect("PUT /api/signals/pools/{id} changes only the fields given (null keeps one); 403 for another user's, 404 for unknown ids", () =>
        Effect.gen(function*() {
          const { poolId, signalId, token } = yield* userWithPool
          const intruder = yield* userWithPool
          const path = `/api/signals/pools/${poolId}`
          const updated = yield* call("PUT", path, {
            token,
            body: { pool_name: "only btc", symbols: ["BTC"], logic: null, enabled: false }
          })
          expect(updated.status).toBe(200)
          expect(updated.body).toMatchObject({
            id: poolId,
            pool_name: "only btc",
            symbols: ["BTC"],
            logic: "OR",
            enabled: false,
            signal_ids: [signalId]
          })
          expectError(yield* call("PUT", path, { token, body: { signal_ids: [intruder.signalId] } }), 404, "not_found")
          expectError(yield* call("PUT", path, { token, body: { symbols: ["NOTACOIN"] } }), 422, "symbol_not_listed")
          expectError(yield* call("PUT", path, { token, body: { logic: "XOR" } }), 400, "invalid_input")
          expectError(
            yield* call("PUT", path, { token: intruder.token, body: { pool_name: "mine" } }),
            403,
            "forbidden"
          )
          expectError(yield* call("DELETE", path, { token: intruder.token }), 403, "forbidden")
          expectError(yield* call("PUT", "/api/signals/pools/999999", { token, body: {} }), 404, "not_found")
          expectError(yield* call("DELETE", "/api/signals/pools/999999", { token }), 404, "not_found")
          expect((yield* call("DELETE", path, { token })).status).toBe(204)
          expect((yield* call("GET", "/api/signals", { token })).body.pools).toEqual([])
        }))

      it.effect("GET /api/signals/triggers reads the caller's log newest first, filtered and paginated", () =>
        Effect.gen(function*() {
          const { poolId, token } = yield* userWithPool
          const intruder = yield* signUp()
          const fired = yield* round
          const mine = fired.filter((t) => t.pool_id === poolId)
          // volume > 0 over 1m holds at once on both symbols.
          expect(mine.map((t) => t.symbol).sort()).toEqual(["BTC", "ETH"])
          const log = yield* call("GET", `/api/signals/triggers?pool_id=${poolId}`, { token })
          expect(log.status).toBe(200)
          expect(log.body.triggers).toHaveLength(2)
          expect(log.body.next_offset).toBeNull()
          expect(log.body.triggers[0]).toMatchObject({
            pool_id: poolId,
            pool_name: "majors",
            exchange: "venue1",
            source_type: "market_signals"
          })
          expect(log.body.triggers[0].values[0]).toMatchObject({ metric: "volume", met: true })
          expect(log.body.triggers[0].values[0].value).toBeGreaterThan(0)
          const page = yield* call("GET", `/api/signals/triggers?pool_id=${poolId}&limit=1`, { token })
          expect(page.body.triggers).toHaveLength(1)
          expect(page.body.next_offset).toBe(1)
          const next = yield* call("GET", `/api/signals/triggers?pool_id=${poolId}&limit=1&offset=1`, { token })
          expect(next.body.triggers[0].id).not.toBe(page.body.triggers[0].id)
          expect(next.body.next_offset).toBeNull()
          const eth = yield* call("GET", `/api/signals/triggers?pool_id=${poolId}&symbol=ETH`, { token })
          expect(eth.body.triggers.map((t: any) => t.symbol)).toEqual(["ETH"])
          const later = new Date(Date.parse(mine[0]!.fired_at) + 1).toISOString()
          expect((yield* call("GET", `/api/signals/triggers?since=${later}`, { token })).body.triggers).toEqual([])
          expect((yield* call("GET", "/api/signals/triggers", { token: intruder.token })).body.triggers).toEqual([])
          expectError(
            yield* call("GET", `/api/signals/triggers?pool_id=${poolId}`, { token: intruder.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/signals/triggers?pool_id=999999", { token }), 404, "not_found")
          expectError(yield* call("GET", "/api/signals/triggers?limit=0", { token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/signals/triggers?since=yesterday", { token }), 400, "invalid_input")
        }))

      it.effect("POST /api/signals/{id}/evaluate answers the value, threshold and whether it is met, and writes nothing", () =>
        Effect.gen(function*() {
          const { signalId, token } = yield* userWithPool
          yield* round
          const before = yield* call("GET", "/api/signals/triggers", { token })
          const engine = yield* SignalEngine
          const samples = (yield* engine.samples("venue1", "SOL")).length
          const reply = yield* call("POST", `/api/signals/${signalId}/evaluate`, { token, body: { symbol: "SOL" } })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({
            signal_id: signalId,
            exchange: "venue1",
            symbol: "SOL",
            metric: "volume",
            operator: "gt",
            threshold: 0,
            time_window: "1m",
            met: true,
            // SOL was never sampled: the minute before the fresh sample comes from candles.
            ready: true,
            reason: null,
            sample_count: 1
          })
          expect(reply.body.value).toBeGreaterThan(0)
          expect((yield* call("GET", "/api/signals/triggers", { token })).body).toEqual(before.body)
          expect((yield* engine.samples("venue1", "SOL")).length).toBe(samples)
          // A watched symbol's window includes the engine's samples.
          const btc = yield* call("POST", `/api/signals/${signalId}/evaluate`, { token, body: { symbol: "BTC" } })
          expect(btc.body.sample_count).toBeGreaterThan(1)
          const intruder = yield* signUp()
          expectError(
            yield* call("POST", `/api/signals/${signalId}/evaluate`, { token, body: { symbol: "NOTACOIN" } }),
            422,
            "symbol_not_listed"
          )
          expectError(
            yield* call("POST", `/api/signals/${signalId}/evaluate`, { token, body: {} }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", `/api/signals/${signalId}/evaluate`, {
              token: intruder.token,
              body: { symbol: "BTC" }
            }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("POST", "/api/signals/999999/evaluate", { token, body: { symbol: "BTC" } }),
            404,
            "not_found"
          )
        }))

      it.effect("GET /api/sampling/pool-status lists the caller's pools with symbols, last sample and errors", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const signal = yield* createSignal(token)
          // Symbols no other test here samples, so nothing has sampled them yet.
          const poolId =
            (yield* createPool(token, { pool_name: "alts", signal_ids: [signal.body.id], symbols: ["LINK", "DOT"] }))
              .body.id
          const before = yield* call("GET", "/api/sampling/pool-status", { token })
          const unsampled = {
            last_sampled_at: null,
            windows: [{ time_window: "1m", covered_from: null, coverage: 0, ready: false }]
          }
          expect(before.body.pools).toEqual([
            {
              pool_id: poolId,
              pool_name: "alts",
              enabled: true,
              symbol_count: 2,
              last_sampled_at: null,
              errors: 0,
              last_error: null,
              symbols: [{ symbol: "LINK", ...unsampled }, { symbol: "DOT", ...unsampled }]
            }
          ])
          yield* round
          const after = yield* call("GET", "/api/sampling/pool-status", { token })
          const now = new Date(yield* Clock.currentTimeMillis).toISOString()
          expect(after.body.pools[0]).toMatchObject({ pool_id: poolId, last_sampled_at: now, errors: 0 })
          const intruder = yield* signUp()
          expect((yield* call("GET", "/api/sampling/pool-status", { token: intruder.token })).body.pools).toEqual([])
        }))

      it.effect("GET /api/sampling/pool-status shows per symbol and window since when the samples cover it, how much, and whether it is ready", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const signal = (metric: string, time_window: string) =>
            Effect.map(
              createSignal(token, {
                signal_name: `${metric} ${time_window}`,
                trigger_condition: { metric, operator: "gt", threshold: 1e12, time_window }
              }),
              (reply) => reply.body.id
            )
          const ids = [
            yield* signal("cvd", "5m"),
            yield* signal("order_imbalance", "1m"),
            yield* signal("taker_ratio", "5m")
          ]
          // Symbols no other test here samples.
          const created = yield* createPool(token, {
            pool_name: "coverage",
            signal_ids: ids,
            symbols: ["AVAX", "NEAR"]
          })
          expect(created.status).toBe(201)
          const windows = Effect.map(
            call("GET", "/api/sampling/pool-status", { token }),
            (reply) => reply.body.pools.find((p: any) => p.pool_id === created.body.id).symbols
          )
          yield* round
          const first = (yield* Clock.currentTimeMillis) - 15_000
          const covering = (coverage1m: number, coverage5m: number) =>
            ["AVAX", "NEAR"].map((symbol) => ({
              symbol,
              last_sampled_at: expect.any(String),
              windows: [
                {
                  time_window: "1m",
                  covered_from: new Date(first).toISOString(),
                  coverage: coverage1m,
                  ready: coverage1m === 1
                },
                {
                  time_window: "5m",
                  covered_from: new Date(first).toISOString(),
                  coverage: coverage5m,
                  ready: coverage5m === 1
                }
              ]
            }))
          // One sample covers the interval before it: 15 s.
          expect(yield* windows).toEqual(covering(0.25, 0.05))
          // The fourth round's minute starts where the first sample's interval does.
          yield* round
          yield* round
          expect(yield* windows).toEqual(covering(0.75, 0.15))
          yield* round
          expect(yield* windows).toEqual(covering(1, 0.2))
          // The dry run agrees: the 5m cvd is not ready, and says why.
          const dryRun = yield* call("POST", `/api/signals/${ids[0]}/evaluate`, { token, body: { symbol: "AVAX" } })
          expect(dryRun.body).toMatchObject({ metric: "cvd", value: null, met: false, ready: false })
          expect(dryRun.body.reason).toBe("not_ready: the samples cover 20% of the 5m window")
        }))

      it.effect("the quick start of docs/signals.md creates a pool that fires on the simulated venue within four rounds", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const page = readFileSync(fileURLToPath(new URL("../../../../docs/signals.md", import.meta.url)), "utf8")
          const [first, second, pool] = [...page.matchAll(/-d '(\{.*?\})'/g)].map((m) => JSON.parse(m[1]!))
          const ids = []
          for (const body of [first, second]) {
            const created = yield* call("POST", "/api/signals", { token, body })
            expect(created.status).toBe(201)
            ids.push(created.body.id)
          }
          const created = yield* call("POST", "/api/signals/pools", { token, body: { ...pool, signal_ids: ids } })
          expect(created.status).toBe(201)
          let fired = 0
          for (let i = 0; i < 4 && fired === 0; i++) {
            fired = (yield* round).filter((t) => t.pool_id === created.body.id).length
          }
          expect(fired).toBeGreaterThan(0)
          const log = yield* call("GET", "/api/signals/triggers", { token })
          expect(log.body.triggers.length).toBe(fired)
        }))

      it.effect("GET /api/signals/wallet-tracking/status counts the caller's tracked wallets", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const idle = yield* call("GET", "/api/signals/wallet-tracking/status", { token })
          expect(idle.status).toBe(200)
          expect(idle.body).toEqual({ enabled: false, last_sync_at: null, tracked_wallets: 0, errors: 0 })
          for (
            const addresses of [[address(1), address(2)], [address(2).toUpperCase().replace("0X", "0x"), address(3)]]
          ) {
            expect(
              (yield* createPool(token, { source_type: "wallet_tracking", symbols: [], source_config: { addresses } }))
                .status
            ).toBe(201)
          }
          const tracking = yield* call("GET", "/api/signals/wallet-tracking/status", { token })
          expect(tracking.body).toMatchObject({ enabled: true, last_sync_at: null, tracked_wallets: 3, errors: 0 })
        }))

      it.effect("a wallet_tracking pool logs the simulated wallets' position changes as triggers", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const addresses = [address(0xa11ce), address(0xb0b)]
          const pool = yield* createPool(token, {
            pool_name: "whales",
            source_type: "wallet_tracking",
            symbols: [],
            source_config: { addresses }
          })
          expect(pool.status).toBe(201)
          // The first sync is the baseline; simulated positions change every five minutes.
          expect((yield* round).filter((t) => t.pool_id === pool.body.id)).toEqual([])
          for (let i = 0; i < 6; i++) {
            yield* TestClock.adjust(Duration.minutes(5))
            yield* round
          }
          const log = yield* call("GET", `/api/signals/triggers?pool_id=${pool.body.id}&limit=500`, { token })
          expect(log.body.triggers.length).toBeGreaterThan(0)
          for (const trigger of log.body.triggers) {
            expect(trigger).toMatchObject({ source_type: "wallet_tracking", values: [] })
            expect(addresses).toContain(trigger.wallet_event.address)
            expect(["opened", "closed", "flipped", "size_changed", "liquidated"]).toContain(trigger.wallet_event.kind)
          }
          const status = yield* call("GET", "/api/signals/wallet-tracking/status", { token })
          expect(status.body).toEqual({
            enabled: true,
            last_sync_at: new Date(yield* Clock.currentTimeMillis).toISOString(),
            tracked_wallets: 2,
            errors: 0
          })
        }))
    })
  })
}
