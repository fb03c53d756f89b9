import { Clock, Effect } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { MarketData } from "../market/MarketData.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import { insightDefaults, type InsightId, type InsightRequest, InsightTask } from "./Assistant.js"
import { AssistantChat } from "./AssistantChat.js"
import { insightJobs, type InsightRow, InsightsRepo } from "./InsightsRepo.js"

const toTask = (row: InsightRow) =>
  new InsightTask({
    task_id: String(row.id),
    status: row.status,
    ...(row.result !== null ? { result: row.result } : {}),
    ...(row.error !== null && row.status === "failed" ? { error: row.error } : {})
  }, fromDecodedRow)

/** Insight jobs: queued by the caller (within the hourly quota), polled by their owner. */
export class Insights extends Effect.Service<Insights>()("@trading-platform/core/Insights", {
  effect: Effect.gen(function*() {
    const repo = yield* InsightsRepo
    const { maxQueuedJobsPerUser } = yield* PlatformConfig
    const assistant = yield* AssistantChat
    const market = yield* MarketData
    const wakeup = yield* JobWakeup

    const submit = (caller: CurrentUserShape, request: InsightRequest) =>
      Effect.gen(function*() {
        const input = {
          symbol: request.symbol ?? insightDefaults.symbol,
          timeframe: request.timeframe ?? insightDefaults.timeframe,
          exchange: request.exchange ?? insightDefaults.exchange,
          prompt: request.prompt
        }
        yield* market.listed(input.exchange, [input.symbol])
        // Over the cap, the hourly quota is not spent: both happen in the admission's transaction.
        const row = yield* repo.jobs.admit(
          caller.id,
          maxQueuedJobsPerUser,
          Effect.zipRight(
            assistant.consume(caller, "insight"),
            repo.insert({
              user_id: caller.id,
              symbol: input.symbol,
              exchange: input.exchange,
              timeframe: input.timeframe,
              prompt: input.prompt ?? null,
              now: new Date(yield* Clock.currentTimeMillis)
            })
          )
        )
        yield* wakeup.wake(insightJobs.table)
        return toTask(row)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Insights.submit", {
          attributes: { userId: caller.id, symbol: request.symbol ?? insightDefaults.symbol }
        })
      )

    const get = (caller: CurrentUserShape, id: InsightId) =>
      repo.findById(id).pipe(
        ownedBy(caller, `Insight ${id}`),
        Effect.map(toTask),
        dieOnStorageFailure,
        withRequestSpan("Insights.get", { attributes: { userId: caller.id, insightId: id } })
      )

    return { submit, get } as const
  })
}) {}
