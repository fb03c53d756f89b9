import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange } from "../venues/Venue.js"
import {
  PoolId,
  PoolLogic,
  SignalId,
  SignalValue,
  SourceConfig,
  SourceType,
  TriggerCondition,
  TriggerId,
  WalletEvent
} from "./Signal.js"

// Comma-separated ids, as `array_to_string` writes them.
const IdList = Schema.transform(Schema.String, Schema.Array(SignalId), {
  strict: false,
  decode: (text) => text === "" ? [] : text.split(",").map(Number),
  encode: (ids) => ids.join(",")
})

export const SignalRow = Schema.Struct({
  id: SignalId,
  user_id: UserId,
  exchange: Exchange,
  signal_name: Schema.String,
  description: Schema.NullOr(Schema.String),
  trigger_condition: Schema.parseJson(TriggerCondition),
  enabled: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type SignalRow = typeof SignalRow.Type

export const PoolRow = Schema.Struct({
  id: PoolId,
  user_id: UserId,
  exchange: Exchange,
  pool_name: Schema.String,
  source_type: SourceType,
  source_config: Schema.parseJson(SourceConfig),
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  signal_ids: IdList,
  logic: PoolLogic,
  enabled: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type PoolRow = typeof PoolRow.Type

const NewSignal = Schema.Struct({
  user_id: UserId,
  exchange: Exchange,
  signal_name: Schema.String,
  description: Schema.NullOr(Schema.String),
  trigger_condition: Schema.parseJson(TriggerCondition),
  enabled: Schema.Boolean,
  now: Schema.DateFromSelf
})

const PoolWrite = Schema.Struct({
  exchange: Exchange,
  pool_name: Schema.String,
  source_type: SourceType,
  source_config: Schema.parseJson(SourceConfig),
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  logic: PoolLogic,
  enabled: Schema.Boolean,
  now: Schema.DateFromSelf
})
export type PoolWrite = typeof PoolWrite.Type

// Triggers logged before `ready` and `reason` existed fired on values that were computed.
const StoredSignalValue = Schema.Struct({
  ...SignalValue.fields,
  ready: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  reason: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})

export const TriggerRow = Schema.Struct({
  id: TriggerId,
  pool_id: PoolId,
  user_id: UserId,
  pool_name: Schema.String,
  exchange: Exchange,
  source_type: SourceType,
  symbol: Schema.String,
  fired_at: IsoTimestamp,
  logic: PoolLogic,
  values: Schema.parseJson(Schema.Array(StoredSignalValue)),
  wallet_event: Schema.NullOr(Schema.parseJson(WalletEvent))
})

const TriggerQuery = Schema.Struct({
  user_id: UserId,
  pool_id: Schema.optional(PoolId),
  symbol: Schema.optional(Schema.String),
  since: Schema.optional(Schema.DateFromSelf),
  limit: Schema.Int,
  offset: Schema.Int
})

const PoolStatusRow = Schema.Struct({
  pool_id: PoolId,
  last_sampled_at: Schema.NullOr(IsoTimestamp),
  errors: Schema.NumberFromString,
  last_error: Schema.NullOr(Schema.String)
})

const SymbolHealthRow = Schema.Struct({
  exchange: Exchange,
  symbol: Schema.String,
  last_sampled_at: Schema.NullOr(Schema.DateFromSelf),
  covered_from: Schema.NullOr(Schema.DateFromSelf)
})

const WalletStatusRow = Schema.Struct({
  last_sync_at: Schema.NullOr(IsoTimestamp),
  errors: Schema.NumberFromString
})

const poolColumns = (sql: SqlClient.SqlClient) =>
  sql`p.*, array_to_string(ARRAY(SELECT m.signal_id FROM signal_pool_members m WHERE m.pool_id = p.id ORDER BY m.position), ',') AS signal_ids`

/** SQL for signals, pools and the trigger log as users see them; no rules. */
export class SignalsRepo extends Effect.Service<SignalsRepo>()("@trading-platform/core/SignalsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertSignal = SqlSchema.single({
      Request: NewSignal,
      Result: SignalRow,
      execute: (s) =>
        sql`
        INSERT INTO signals (user_id, exchange, signal_name, description, trigger_condition, enabled, created_at, updated_at)
        VALUES (${s.user_id}, ${s.exchange}, ${s.signal_name}, ${s.description}, ${s.trigger_condition}, ${s.enabled}, ${s.now}, ${s.now})
        RETURNING *`
    })

    const updateSignal = SqlSchema.single({
      Request: Schema.Struct({ ...NewSignal.fields, id: SignalId }),
      Result: SignalRow,
      execute: (s) =>
        sql`
        UPDATE signals SET exchange = ${s.exchange}, signal_name = ${s.signal_name}, description = ${s.description},
          trigger_condition = ${s.trigger_condition}, enabled = ${s.enabled}, updated_at = ${s.now}
        WHERE id = ${s.id}
        RETURNING *`
    })

    const findSignal = SqlSchema.findOne({
      Request: SignalId,
      Result: SignalRow,
      execute: (id) => sql`SELECT * FROM signals WHERE id = ${id}`
    })

    const signalsByUser = SqlSchema.findAll({
      Request: UserId,
      Result: SignalRow,
      execute: (userId) => sql`SELECT * FROM signals WHERE user_id = ${userId} ORDER BY id`
    })

    const signalsByIds = SqlSchema.findAll({
      Request: Schema.Array(SignalId),
      Result: SignalRow,
      execute: (ids) =>
        ids.length === 0
          ? sql`SELECT * FROM signals WHERE false`
          : sql`SELECT * FROM signals WHERE ${sql.in("id", ids)}`
    })

    const deleteSignal = (id: SignalId) => sql`DELETE FROM signals WHERE id = ${id}`.pipe(Effect.asVoid)

    /** The pools that list the signal. */
    const poolsUsing = (id: SignalId) =>
      Effect.map(
        sql<{ pool_id: number }>`SELECT pool_id FROM signal_pool_members WHERE signal_id = ${id} ORDER BY pool_id`,
        (rows) => rows.map((r) => r.pool_id)
      )

    const findPool = SqlSchema.findOne({
      Request: PoolId,
      Result: PoolRow,
      execute: (id) => sql`SELECT ${poolColumns(sql)} FROM signal_pools p WHERE p.id = ${id}`
    })

    const poolsByUser = SqlSchema.findAll({
      Request: UserId,
      Result: PoolRow,
      execute: (userId) => sql`SELECT ${poolColumns(sql)} FROM signal_pools p WHERE p.user_id = ${userId} ORDER BY p.id`
    })

    /** Every enabled pool of every user, for the engine. */
    const enabledPools = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PoolRow,
      execute: () => sql`SELECT ${poolColumns(sql)} FROM signal_pools p WHERE p.enabled ORDER BY p.id`
    })

    const encodeWrite = Schema.encode(PoolWrite)

    const setMembers = (poolId: PoolId, signalIds: ReadonlyArray<SignalId>) =>
      Effect.gen(function*() {
        yield* sql`DELETE FROM signal_pool_members WHERE pool_id = ${poolId}`
        if (signalIds.length === 0) return
        yield* sql`INSERT INTO signal_pool_members ${
          sql.insert(signalIds.map((signal_id, position) => ({ pool_id: poolId, signal_id, position })))
        }`
      })

    /** Writes a pool and its members in one transaction; answers the stored pool. */
    const insertPool = (userId: UserId, write: PoolWrite, signalIds: ReadonlyArray<SignalId>) =>
      sql.withTransaction(Effect.gen(function*() {
        const w = yield* encodeWrite(write)
        const [row] = yield* sql<{ id: PoolId }>`
          INSERT INTO signal_pools (user_id, exchange, pool_name, source_type, source_config, symbols, logic, enabled, created_at, updated_at)
          VALUES (${userId}, ${w.exchange}, ${w.pool_name}, ${w.source_type}, ${w.source_config}, ${w.symbols}, ${w.logic},
            ${w.enabled}, ${w.now}, ${w.now})
          RETURNING id`
        yield* setMembers(row!.id, signalIds)
        return yield* Effect.flatten(findPool(row!.id))
      }))

    const updatePool = (id: PoolId, write: PoolWrite, signalIds: ReadonlyArray<SignalId>) =>
      sql.withTransaction(Effect.gen(function*() {
        const w = yield* encodeWrite(write)
        yield* sql`
          UPDATE signal_pools SET exchange = ${w.exchange}, pool_name = ${w.pool_name}, source_type = ${w.source_type},
            source_config = ${w.source_config}, symbols = ${w.symbols}, logic = ${w.logic}, enabled = ${w.enabled}, updated_at = ${w.now}
          WHERE id = ${id}`
        yield* setMembers(id, signalIds)
        // Edges of symbols the pool no longer watches start afresh if they come back.
        yield* sql`DELETE FROM signal_pool_edges WHERE pool_id = ${id} AND NOT (symbol IN (SELECT jsonb_array_elements_text(${w.symbols}::jsonb)))`
        // Likewise for wallets it no longer tracks.
        yield* sql`
          DELETE FROM signal_wallets WHERE pool_id = ${id} AND NOT (address IN (
            SELECT jsonb_array_elements_text(COALESCE(${w.source_config}::jsonb -> 'addresses', '[]'::jsonb))))`
        return yield* Effect.flatten(findPool(id))
      }))

    const deletePool = (id: PoolId) => sql`DELETE FROM signal_pools WHERE id = ${id}`.pipe(Effect.asVoid)

    const triggers = SqlSchema.findAll({
      Request: TriggerQuery,
      Result: TriggerRow,
      execute: (q) =>
        sql`
          SELECT *, signal_values AS values FROM signal_triggers WHERE ${
          sql.and([
            sql`user_id = ${q.user_id}`,
            ...(q.pool_id === undefined ? [] : [sql`pool_id = ${q.pool_id}`]),
            ...(q.symbol === undefined ? [] : [sql`symbol = ${q.symbol}`]),
            ...(q.since === undefined ? [] : [sql`fired_at >= ${q.since}`])
          ])
        }
          ORDER BY fired_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** Sampling health of each of the user's pools, over the symbols it watches. */
    const poolStatus = SqlSchema.findAll({
      Request: UserId,
      Result: PoolStatusRow,
      execute: (userId) =>
        sql`
        SELECT p.id AS pool_id, max(h.last_sampled_at) AS last_sampled_at, COALESCE(sum(h.errors), 0)::text AS errors,
          (array_agg(h.last_error) FILTER (WHERE h.last_error IS NOT NULL))[1] AS last_error
        FROM signal_pools p
        LEFT JOIN signal_sample_health h
          ON h.exchange = p.exchange AND h.symbol IN (SELECT jsonb_array_elements_text(p.symbols::jsonb))
        WHERE p.user_id = ${userId}
        GROUP BY p.id
        ORDER BY p.id`
    })

    /** The sampling health of each symbol the user's pools watch. */
    const symbolHealth = SqlSchema.findAll({
      Request: UserId,
      Result: SymbolHealthRow,
      execute: (userId) =>
        sql`
        SELECT h.exchange, h.symbol, h.last_sampled_at, h.covered_from
        FROM signal_sample_health h
        WHERE EXISTS (
          SELECT 1 FROM signal_pools p
          WHERE p.user_id = ${userId} AND p.exchange = h.exchange
            AND h.symbol IN (SELECT jsonb_array_elements_text(p.symbols::jsonb)))`
    })

    const walletStatus = SqlSchema.single({
      Request: UserId,
      Result: WalletStatusRow,
      execute: (userId) =>
        sql`
        SELECT max(w.last_sync_at) AS last_sync_at,
          COALESCE(sum(w.errors), 0)::text AS errors
        FROM signal_wallets w JOIN signal_pools p ON p.id = w.pool_id
        WHERE p.user_id = ${userId} AND p.enabled AND p.source_type = 'wallet_tracking'`
    })

    /** Deletes the triggers that fired before `before`. */
    const purgeTriggers = (before: Date) =>
      sql`DELETE FROM signal_triggers WHERE fired_at < ${before}`.pipe(Effect.asVoid)

    return {
      purgeTriggers,
      insertSignal,
      updateSignal,
      findSignal,
      signalsByUser,
      signalsByIds,
      deleteSignal,
      poolsUsing,
      findPool,
      poolsByUser,
      enabledPools,
      insertPool,
      updatePool,
      deletePool,
      triggers,
      poolStatus,
      symbolHealth,
      walletStatus
    } as const
  })
}) {}
