import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { type JobQueue, makeJobQueue } from "../jobs/JobQueue.js"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Timeframe } from "../venues/Venue.js"
import { DecisionRound, ModelDecision, RoundOrder, RoundOutcome, RoundStatus, RoundTrigger } from "./AiTrader.js"

const Json = <S extends Schema.Schema.Any>(schema: S) => Schema.parseJson(schema)

/** The columns a user sets; every write sets all of them. */
const settings = {
  enabled: Schema.Boolean,
  symbols: Json(Schema.Array(Schema.String)),
  timeframe: Timeframe,
  interval_minutes: Schema.Int,
  signal_pool_ids: Json(Schema.Array(Schema.Int)),
  system_prompt: Schema.NullOr(Schema.String),
  user_template: Schema.NullOr(Schema.String),
  max_rounds_per_hour: Schema.NullOr(Schema.Int),
  max_tokens_per_day: Schema.NullOr(Schema.Int)
}

export const AiTraderRow = Schema.Struct({
  account_id: AccountId,
  user_id: UserId,
  ...settings,
  next_run_at: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
})
export type AiTraderRow = typeof AiTraderRow.Type

/** What a write sets: the settings and the next slot. */
export const AiTraderEdit = Schema.Struct({ ...settings, next_run_at: Schema.NullOr(Schema.DateFromSelf) })
export type AiTraderEdit = typeof AiTraderEdit.Type

/** What a round keeps of its model call: stored as soon as the model answered, so a round taken over does not ask again. */
export const RoundCall = Schema.Struct({
  model: Schema.String,
  prompt: Schema.String,
  raw_answer: Schema.NullOr(Schema.String),
  /** The decoded decisions; null when the answer did not decode (or there was none). */
  decisions: Schema.NullOr(Schema.Array(ModelDecision)),
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  cost: Schema.Number,
  latency_ms: Schema.Int,
  /** Whether the answer came from the model-call cache (no call made). */
  cached: Schema.Boolean,
  /** Why the call gave no decisions. */
  error: Schema.NullOr(Schema.String)
})
export type RoundCall = typeof RoundCall.Type

export const RoundRow = Schema.Struct({
  id: Schema.Int,
  user_id: UserId,
  account_id: AccountId,
  trigger: RoundTrigger,
  idempotency_key: Schema.String,
  status: RoundStatus,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(RoundOutcome),
  model: Schema.NullOr(Schema.String),
  prompt: Schema.NullOr(Schema.String),
  raw_answer: Schema.NullOr(Schema.String),
  decisions: Schema.NullOr(Json(Schema.Array(ModelDecision))),
  orders: Schema.NullOr(Json(Schema.Array(RoundOrder))),
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  cost: Schema.NumberFromString,
  latency_ms: Schema.NullOr(Schema.Int),
  cached: Schema.Boolean,
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type RoundRow = typeof RoundRow.Type

/** What a finished round leaves (the job's result): its outcome, the orders, and why it did not trade. */
export const RoundResult = Schema.Struct({
  outcome: RoundOutcome,
  orders: Schema.Array(RoundOrder),
  error: Schema.NullOr(Schema.String)
})
export type RoundResult = typeof RoundResult.Type

export const toRound = (
  { attempts: _, claimed_by: __, idempotency_key: ___, lease_until: ____, user_id: _____, ...row }: RoundRow
) => new DecisionRound({ ...row, orders: row.orders ?? [] })

/** The key of the round of an account's schedule at `slot` (epoch ms): one round per slot, whichever replica queued it. */
export const scheduleKey = (accountId: number, slot: number) => `schedule:${accountId}:${slot}`

/** The kind of job of AI decision rounds (in wake-ups, logs and spans). */
export const aiRoundJobKind = "ai_round"

/** The channel every instance's streams hear finished rounds on. */
export const decisionChannel = "ai_decision_rounds"

/** What the channel carries: a finished round and its account's owner. */
export const DecisionNotice = Schema.Struct({ user_id: UserId, round: DecisionRound })
export type DecisionNotice = typeof DecisionNotice.Type

const uniqueViolation = "23505"

/** SQL for AI traders' settings and their decision rounds (a job queue, one round per account at a time). */
export class AiTradersRepo extends Effect.Service<AiTradersRepo>()("@trading-platform/core/AiTradersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: AccountId,
      Result: AiTraderRow,
      execute: (id) => sql`SELECT * FROM ai_traders WHERE account_id = ${id}`
    })

    const upsert = SqlSchema.single({
      Request: Schema.Struct({ account_id: AccountId, user_id: UserId, edit: AiTraderEdit, now: Schema.DateFromSelf }),
      Result: AiTraderRow,
      execute: ({ account_id, edit, now, user_id }) =>
        sql`
        INSERT INTO ai_traders ${sql.insert({ ...edit, account_id, user_id, created_at: now, updated_at: now })}
        ON CONFLICT (account_id) DO UPDATE SET ${sql.update({ ...edit, updated_at: now })}
        RETURNING *`
    })

    /** Enabled AI traders whose schedule is due at `now`. */
    const due = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: AiTraderRow,
      execute: (now) =>
        sql`
        SELECT * FROM ai_traders WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= ${now}
        ORDER BY next_run_at LIMIT 100`
    })

    /** The earliest slot of any enabled AI trader, if one has a schedule. */
    const nextSlot = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ at: Schema.DateFromSelf }),
      execute: () =>
        sql`SELECT min(next_run_at) AS at FROM ai_traders WHERE enabled HAVING min(next_run_at) IS NOT NULL`
    })

    /** Enabled AI traders that listen to a signal pool. */
    const listeningTo = SqlSchema.findAll({
      Request: Schema.Int,
      Result: AiTraderRow,
      execute: (poolId) =>
        sql`
        SELECT * FROM ai_traders
        WHERE enabled AND signal_pool_ids::jsonb @> jsonb_build_array(${poolId}::integer) ORDER BY account_id`
    })

    /** Moves a schedule on from the slot it was read at; false when someone else already did. */
    const advance = (id: AccountId, from: Date, to: Date) =>
      Effect.map(
        sql`UPDATE ai_traders SET next_run_at = ${to} WHERE account_id = ${id} AND next_run_at = ${from} RETURNING account_id`,
        (rows) => rows.length > 0
      )

    /** Queues a round; a key seen before (the same slot, from any replica) is skipped (none). */
    const enqueue = (round: {
      readonly user_id: UserId
      readonly account_id: AccountId
      readonly trigger: RoundTrigger
      readonly idempotency_key: string
      readonly now: Date
    }) =>
      Effect.flatMap(
        sql`
          INSERT INTO ai_decision_rounds ${
          sql.insert({
            user_id: round.user_id,
            account_id: round.account_id,
            trigger: round.trigger,
            idempotency_key: round.idempotency_key,
            status: "queued",
            created_at: round.now
          })
        }
          ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
        (rows) =>
          rows.length === 0
            ? Effect.succeed(Option.none())
            : Effect.map(Schema.decodeUnknown(RoundRow)(rows[0]), Option.some)
      )

    // A round's columns, not the job's `result` beside them, which repeats its outcome, orders and error.
    const findRound = SqlSchema.findOne({
      Request: Schema.Int,
      Result: RoundRow,
      execute: (id) => sql`SELECT ${columnsOf(sql, RoundRow)} FROM ai_decision_rounds WHERE id = ${id}`
    })

    /** The model's answer in the account's scheduled round at `slot`, if that round asked its model and it answered. */
    const scheduledAnswer = SqlSchema.findOne({
      Request: Schema.Struct({ account_id: AccountId, slot: Schema.Number }),
      Result: Schema.Struct({ raw_answer: Schema.String }),
      execute: ({ account_id, slot }) =>
        sql`
        SELECT raw_answer FROM ai_decision_rounds
        WHERE idempotency_key = ${scheduleKey(account_id, slot)} AND raw_answer IS NOT NULL`
    })

    const list = SqlSchema.findAll({
      Request: Schema.Struct({ account_id: AccountId, limit: Schema.Int, offset: Schema.Int }),
      Result: RoundRow,
      execute: (q) =>
        sql`
        SELECT ${columnsOf(sql, RoundRow)} FROM ai_decision_rounds WHERE account_id = ${q.account_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** Rounds of the account that asked its model (not skipped) since `since`, and the tokens they used. */
    const usageSince = (id: AccountId, since: Date, except: number) =>
      Effect.map(
        sql<{ rounds: number; tokens: string | number | null }>`
          SELECT count(*)::int AS rounds, COALESCE(sum(prompt_tokens + completion_tokens), 0)::int AS tokens
          FROM ai_decision_rounds
          WHERE account_id = ${id} AND created_at >= ${since} AND id <> ${except}
            AND (outcome IS NULL OR outcome <> 'skipped') AND status IN ('running', 'completed')`,
        (rows) => ({ rounds: Number(rows[0]?.rounds ?? 0), tokens: Number(rows[0]?.tokens ?? 0) })
      )

    /** Keeps the model call on the round, for this attempt only. */
    const called = (round: Pick<RoundRow, "id" | "attempts">, call: RoundCall) =>
      Effect.flatMap(Schema.encode(RoundCall)(call), (row) =>
        sql`
          UPDATE ai_decision_rounds SET ${
          sql.update({
            model: row.model,
            prompt: row.prompt,
            raw_answer: row.raw_answer,
            decisions: row.decisions === null ? null : JSON.stringify(row.decisions),
            prompt_tokens: row.prompt_tokens,
            completion_tokens: row.completion_tokens,
            cost: row.cost,
            latency_ms: row.latency_ms,
            cached: row.cached
          })
        }
          WHERE id = ${round.id} AND attempts = ${round.attempts} AND status = 'running'`).pipe(Effect.asVoid)

    /** Tells every instance's streams (`decisionChannel`, at commit) of a finished round. */
    const announce = (id: number) =>
      Effect.gen(function*() {
        const row = yield* findRound(id)
        if (Option.isNone(row)) return
        const notice = yield* Schema.encode(DecisionNotice)({ user_id: row.value.user_id, round: toRound(row.value) })
        yield* sql`SELECT pg_notify(${decisionChannel}, ${JSON.stringify(notice)})`
      })

    const jobs = yield* makeJobQueue({
      table: "ai_decision_rounds",
      Row: RoundRow,
      Result: RoundResult,
      summary: (result) => ({
        outcome: result.outcome,
        orders: JSON.stringify(result.orders),
        error: result.error
      }),
      exclusiveBy: "account_id"
    })
    // Two claimers racing for two rounds of one account: the unique index lets one through. A
    // round's end is announced to the streams once it is written.
    const queue: JobQueue<RoundRow, RoundResult> = {
      ...jobs,
      complete: (run, result, now) => Effect.zipRight(jobs.complete(run, result, now), announce(run.id)),
      fail: (run, error, now) => Effect.zipRight(jobs.fail(run, error, now), announce(run.id)),
      claim: (c) =>
        jobs.claim(c).pipe(
          Effect.catchIf(
            (e) => e._tag === "SqlError" && (e.cause as { code?: unknown } | undefined)?.code === uniqueViolation,
            () => Effect.succeed(Option.none())
          )
        )
    }

    return {
      find,
      upsert,
      due,
      nextSlot,
      listeningTo,
      advance,
      enqueue,
      findRound,
      scheduledAnswer,
      list,
      usageSince,
      called,
      announce,
      queue
    } as const
  })
}) {}
