import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { evaluatePool, type MarketSample, PlatformConfig, PlatformLive, windowInputs } from "@trading-platform/core"
import { testDatabaseUrl, testOptions, testStorages } from "@trading-platform/core/testing"
import { type Context, Effect, Layer, Redacted } from "effect"
import type { ChildProcess } from "node:child_process"
import { newCaller } from "../support/Callers.js"
import { serverProcess } from "../support/ServerProcess.js"
import { depthPool } from "../support/SignalPools.js"

/** A platform instance whose signal engine samples every second, in a child process, until the scope closes. */
const engineProcess = (url: Redacted.Redacted) =>
  serverProcess(url, {
    BACKTEST_CONCURRENCY: "0",
    SIGNAL_SAMPLER: "true",
    SAMPLING_INTERVAL_S: "1",
    SIGNAL_LEASE_S: "2"
  }, "SIGKILL")

/** Polls `check` until it holds (a generous deadline: waits on what happens, whatever the machine's load). */
const until = <E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      if (yield* check) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
    }
    return yield* Effect.die(new Error(`waited a minute for ${what}`))
  })

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

interface SampleRow extends Omit<MarketSample, "sampled_at"> {
  readonly sampled_at: Date
}

describe.skipIf(testDatabaseUrl === undefined)("signal engine across processes over postgres", () => {
  it.scopedLive(
    "two server processes on one database write every expected trigger exactly once, across a takeover",
    () =>
      Effect.gen(function*() {
        const storage = yield* testStorages[1]!.storage
        if (storage.kind !== "postgres") return yield* Effect.die(new Error("expected PostgreSQL"))
        // This instance only sets up (and creates the schema); its engine stays off.
        const setup = yield* Layer.build(
          PlatformLive.pipe(Layer.provideMerge(PlatformConfig.layer(testOptions(storage))))
        )
        const on = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, setup as Context.Context<any>)

        const pool = yield* on(Effect.gen(function*() {
          const caller = yield* newCaller("engine")
          // The simulated book changes every second, so depth_ratio > 1 flips often.
          return yield* depthPool(caller, ["BTC", "ETH"])
        }))
        const sql = yield* on(SqlClient.SqlClient)

        const [first, second] = yield* Effect.all([engineProcess(storage.url), engineProcess(storage.url)], {
          concurrency: "unbounded"
        })
        const holder = sql<{ holder: string }>`SELECT holder FROM leases WHERE name = 'signal-engine'`.pipe(
          Effect.map(([lease]) => lease === undefined ? undefined : Number(lease.holder.split(":")[1]))
        )
        const firedSince = (since: Date) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM signal_triggers
            WHERE pool_id = ${pool.id} AND fired_at > ${since}`.pipe(Effect.map(([row]) => row!.n > 0))
        yield* until("the first engine's first trigger", firedSince(new Date(0)))
        // Kill whichever process holds the engine; the other takes it over once the lease runs out.
        const leader = yield* holder
        const [victim, survivor] = leader === first.pid ? [first, second] : [second, first]
        expect(victim.pid).toBe(leader)
        victim.kill("SIGKILL")
        yield* exited(victim)
        const killedAt = new Date()
        yield* until("the takeover", Effect.map(holder, (pid) => pid === survivor.pid))
        yield* until("a trigger after the takeover", firedSince(killedAt))
        survivor.kill("SIGKILL")
        yield* exited(survivor)

        // Replay the stored samples through the same evaluation: the rising edges are the expected triggers.
        const signals = new Map(
          (yield* sql<any>`SELECT * FROM signals`).map((
            s: any
          ) => [s.id, { ...s, trigger_condition: JSON.parse(s.trigger_condition) }])
        )
        const expected: Array<string> = []
        for (const symbol of pool.symbols) {
          const rows = yield* sql<SampleRow>`SELECT * FROM signal_samples WHERE symbol = ${symbol} ORDER BY sampled_at`
          const history = rows.map((r): MarketSample => ({ ...r, sampled_at: r.sampled_at.getTime() }))
          let met = false
          history.forEach((sample, i) => {
            const at = sample.sampled_at
            const now = evaluatePool(pool, signals, windowInputs(history.slice(0, i + 1), 1_000, at), at)
            if (!now.decided) return
            if (now.met && !met) expected.push(`${symbol}@${new Date(at).toISOString()}`)
            met = now.met
          })
        }
        const written = (yield* sql<
          { symbol: string; fired_at: Date }
        >`SELECT symbol, fired_at FROM signal_triggers WHERE pool_id = ${pool.id}`)
          .map((t) => `${t.symbol}@${t.fired_at.toISOString()}`)
        expect(written.sort()).toEqual(expected.sort())
        expect(new Set(written).size).toBe(written.length)
        // Both processes fired some: before the kill and after the takeover.
        const times = written.map((w) => Date.parse(w.split("@")[1]!))
        expect(times.some((t) => t < killedAt.getTime())).toBe(true)
        expect(times.some((t) => t > killedAt.getTime())).toBe(true)
      }),
    { timeout: 240_000 }
  )
})
