import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"
import { MarketSample } from "./MarketSample.js"
import { PoolId, PoolLogic, SignalValue, SourceType, TriggerId, WalletEvent } from "./Signal.js"
import { TriggerRow } from "./SignalsRepo.js"

const SampleRow = Schema.Struct({
  ...MarketSample.fields,
  sampled_at: Schema.transform(Schema.DateFromSelf, Schema.Number, {
    strict: true,
    decode: (date) => date.getTime(),
    encode: (ms) => new Date(ms)
  })
})

/** A pool's edge for one symbol, as `setEdges` answers them. */
export const edgeKey = (poolId: number, symbol: string) => `${poolId}:${symbol}`

const NewTrigger = Schema.Struct({
  pool_id: PoolId,
  user_id: UserId,
  pool_name: Schema.String,
  exchange: Exchange,
  source_type: SourceType,
  symbol: Schema.String,
  fired_at: Schema.DateFromSelf,
  logic: PoolLogic,
  values: Schema.parseJson(Schema.Array(SignalValue)),
  wallet_event: Schema.NullOr(Schema.parseJson(WalletEvent))
})
export type NewTrigger = typeof NewTrigger.Type

/** What one round writes for one sampled symbol: with a sample, the start of the stretch the samples cover. */
export type SampleOutcome =
  | { readonly _tag: "Sampled"; readonly sample: MarketSample; readonly covered_from: Date }
  | { readonly _tag: "Failed"; readonly exchange: Exchange; readonly symbol: string; readonly error: string }

/** SQL of the engine: samples, edges, triggers, and tracked wallets. */
export class SignalEngineRepo extends Effect.Service<SignalEngineRepo>()("@trading-platform/core/SignalEngineRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const samples = SqlSchema.findAll({
      Request: Schema.Struct({ exchange: Exchange, symbol: Schema.String, since: Schema.DateFromSelf }),
      Result: SampleRow,
      execute: (q) =>
        sql`
        SELECT * FROM signal_samples WHERE exchange = ${q.exchange} AND symbol = ${q.symbol} AND sampled_at >= ${q.since}
        ORDER BY sampled_at`
    })

    const encodeSample = Schema.encode(SampleRow)

    /** Stores the round's samples and counts its failures. */
    const recordRound = (outcomes: ReadonlyArray<SampleOutcome>, at: Date) =>
      Effect.forEach(outcomes, (outcome) =>
        outcome._tag === "Sampled"
          ? Effect.flatMap(encodeSample(outcome.sample), (row) =>
            Effect.zipRight(
              sql`INSERT INTO signal_samples ${sql.insert(row)} ON CONFLICT DO NOTHING`,
              sql`
                INSERT INTO signal_sample_health (exchange, symbol, last_sampled_at, covered_from, errors)
                VALUES (${row.exchange}, ${row.symbol}, ${at}, ${outcome.covered_from}, 0)
                ON CONFLICT (exchange, symbol) DO UPDATE
                SET last_sampled_at = excluded.last_sampled_at, covered_from = excluded.covered_from`
            ))
          : sql`
            INSERT INTO signal_sample_health (exchange, symbol, errors, last_error)
            VALUES (${outcome.exchange}, ${outcome.symbol}, 1, ${outcome.error})
            ON CONFLICT (exchange, symbol) DO UPDATE
            SET errors = signal_sample_health.errors + 1, last_error = excluded.last_error`, { discard: true })

    /** Forgets samples older than `before`. */
    const prune = (before: Date) => sql`DELETE FROM signal_samples WHERE sampled_at < ${before}`.pipe(Effect.asVoid)

    /**
     * Records whether each pool's condition holds for each symbol (one entry per pair), in one
     * statement however many pools there are; answers the pairs on the edge from not met (or never
     * evaluated) to met. Each row is decided by the statement, so two writers can never both see
     * the same edge.
     */
    const setEdges = (edges: ReadonlyArray<{ pool_id: PoolId; symbol: string; met: boolean }>, at: Date) =>
      edges.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
          sql<{ pool_id: number; symbol: string; met: boolean }>`
            INSERT INTO signal_pool_edges (pool_id, symbol, met, changed_at)
            SELECT pool_id, symbol, met, ${at}
            FROM unnest(${edges.map((e) => e.pool_id)}::int[], ${edges.map((e) => e.symbol)}::text[],
              ${edges.map((e) => e.met)}::bool[]) AS e (pool_id, symbol, met)
            ON CONFLICT (pool_id, symbol) DO UPDATE SET met = excluded.met, changed_at = excluded.changed_at
            WHERE signal_pool_edges.met <> excluded.met
            RETURNING pool_id, symbol, met`,
          (rows) => new Set(rows.filter((r) => r.met).map((r) => edgeKey(r.pool_id, r.symbol)))
        )

    const insertTrigger = (trigger: NewTrigger) =>
      Effect.flatMap(Schema.encode(NewTrigger)(trigger), (t) =>
        Effect.map(
          sql<{ id: number }>`
            INSERT INTO signal_triggers (pool_id, user_id, pool_name, exchange, source_type, symbol, fired_at, logic, signal_values, wallet_event)
            VALUES (${t.pool_id}, ${t.user_id}, ${t.pool_name}, ${t.exchange}, ${t.source_type}, ${t.symbol}, ${t.fired_at}, ${t.logic},
              ${t.values}, ${t.wallet_event})
            RETURNING id`,
          ([row]) => TriggerId.make(row!.id)
        ))

    /** Trigger rows after `id`, oldest first. */
    const triggersAfter = SqlSchema.findAll({
      Request: Schema.Number,
      Result: TriggerRow,
      execute: (id) =>
        sql`SELECT *, signal_values AS values FROM signal_triggers WHERE id > ${id} ORDER BY id LIMIT 1000`
    })

    const lastTriggerId = Effect.map(
      sql<{ id: number | null }>`SELECT max(id) AS id FROM signal_triggers`,
      ([row]) => row?.id ?? 0
    )

    const WalletRow = Schema.Struct({
      address: Schema.String,
      positions: Schema.parseJson(
        Schema.Array(Schema.Struct({ symbol: Schema.String, size: Schema.Number, entry_price: Schema.Number }))
      ),
      last_sync_at: Schema.NullOr(Schema.DateFromSelf)
    })

    /** The last synced positions of each tracked wallet of the pool (`last_sync_at` null: never synced). */
    const wallets = SqlSchema.findAll({
      Request: PoolId,
      Result: WalletRow,
      execute: (poolId) => sql`SELECT address, positions, last_sync_at FROM signal_wallets WHERE pool_id = ${poolId}`
    })

    const encodeWallet = Schema.encode(WalletRow)

    const walletSynced = (poolId: PoolId, wallet: typeof WalletRow.Type) =>
      Effect.flatMap(encodeWallet(wallet), (w) =>
        sql`
          INSERT INTO signal_wallets (pool_id, address, positions, last_sync_at) VALUES (${poolId}, ${w.address}, ${w.positions}, ${w.last_sync_at})
          ON CONFLICT (pool_id, address) DO UPDATE SET positions = excluded.positions, last_sync_at = excluded.last_sync_at`)

    const walletFailed = (poolId: PoolId, address: string, error: string) =>
      sql`
        INSERT INTO signal_wallets (pool_id, address, positions, errors, last_error) VALUES (${poolId}, ${address}, '[]', 1, ${error})
        ON CONFLICT (pool_id, address) DO UPDATE SET errors = signal_wallets.errors + 1, last_error = excluded.last_error`

    return {
      sql,
      wallets,
      walletSynced,
      walletFailed,
      samples,
      recordRound,
      prune,
      setEdges,
      insertTrigger,
      triggersAfter,
      lastTriggerId
    } as const
  })
}) {}
