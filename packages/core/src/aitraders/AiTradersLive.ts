import { Effect, Layer, Option, Queue } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { JobFailed, runJobWorkers } from "../jobs/JobWorkers.js"
import { purgeOlderThan, wokenLoop } from "../jobs/Leases.js"
import type { Trigger } from "../signals/Signal.js"
import { SignalEngine } from "../signals/SignalEngine.js"
import { AiBacktests } from "./AiBacktests.js"
import { aiBacktestJobKind, AiBacktestsRepo } from "./AiBacktestsRepo.js"
import { AiTraders } from "./AiTraders.js"
import { aiRoundJobKind, AiTradersRepo } from "./AiTradersRepo.js"
import { ModelCalls } from "./ModelCalls.js"

/**
 * The schedule of AI traders, on the replica holding the `ai_trader_scheduler` lease: at the
 * earliest slot of an enabled AI trader it queues a round for each one whose slot is due (key
 * `schedule:<account>:<slot>`, so a slot is one round whichever replica saw it) and moves it to its
 * next slot; missed slots, after downtime, run once. Between slots it sleeps, woken by the database
 * when an AI trader is enabled or its interval changes (migration 0031), or after the poll.
 */
export const AiTraderSchedulerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const traders = yield* AiTraders
    const repo = yield* AiTradersRepo
    const pass = Effect.zipRight(
      traders.queueDue,
      Effect.map(repo.nextSlot(), Option.match({ onNone: () => Infinity, onSome: ({ at }) => at.getTime() }))
    )
    yield* wokenLoop("ai_trader_scheduler", {
      poll: options.pollInterval,
      lease: options.lease,
      wakeOn: "ai_trader_schedule"
    }, pass)
  })
)

/** Rounds on signals: every trigger of a signal pool queues a round for each AI trader listening to it. */
export const AiTraderSignalTriggersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const engine = yield* SignalEngine
    const traders = yield* AiTraders
    const triggers = yield* engine.subscribe
    const onTrigger = (trigger: Trigger) =>
      traders.onTrigger(trigger).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logWarning(`AI rounds for trigger ${trigger.id} could not be queued`, cause)
        )
      )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(triggers), onTrigger)))
  })
)

/**
 * Runs decision rounds on the job mechanism (`jobs/`), with the automation runs' options: each
 * worker claims one round at a time (one per account at a time, across replicas), renews its lease
 * while the model thinks, and hands the round back when the venue or the database fails. A round
 * whose account is gone fails for good.
 */
export const AiTraderRoundsLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const traders = yield* AiTraders
    yield* runJobWorkers({
      kind: aiRoundJobKind,
      queue: traders.queue,
      options,
      run: (round, lease) =>
        lease.keepAlive(traders.runRound(round)).pipe(
          Effect.catchTags({
            NotFound: (e) => new JobFailed({ message: e.error }),
            Forbidden: (e) => new JobFailed({ message: e.error })
          })
        )
    })
  })
)

/**
 * Runs AI backtests on the job mechanism, with the program backtests' options
 * (`BACKTEST_CONCURRENCY`, …): a job whose worker died resumes once its lease expires, starting
 * over with the model calls it made cached.
 */
export const AiBacktestWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { backtests: options } = yield* PlatformConfig
    const backtests = yield* AiBacktests
    yield* runJobWorkers({ kind: aiBacktestJobKind, queue: backtests.queue, options, run: backtests.run })
  })
)

/** Deletes AI backtests that finished longer ago than `BACKTEST_RETENTION_DAYS`, as program backtests are. */
export const AiBacktestRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* AiBacktestsRepo
    yield* purgeOlderThan("ai-backtest-retention", retention.purgeInterval, retention.backtests, repo.purgeFinished)
  })
)

export { AiBacktests, AiTraders, AiTradersRepo }

// The scheduler holds a lease, so only the instances that take part (AUTOMATION_ENABLED) compete for it.
const background = Layer.unwrapEffect(
  Effect.map(
    PlatformConfig,
    ({ automation }) =>
      automation.enabled
        ? Layer.mergeAll(
          AiTraderSchedulerLive,
          AiTraderSignalTriggersLive,
          AiTraderRoundsLive,
          AiBacktestWorkersLive,
          AiBacktestRetentionLive
        )
        : Layer.mergeAll(AiTraderRoundsLive, AiBacktestWorkersLive, AiBacktestRetentionLive)
  )
)

/**
 * AI traders: their settings, decision log and backtests, and this instance's background work
 * (round and backtest workers; the scheduler when automation is enabled). Needs accounts, automation (the order path),
 * market data and venues.
 */
export const AiTradersLive = background.pipe(
  Layer.provideMerge(AiBacktests.Default),
  Layer.provideMerge(Layer.merge(AiTraders.Default, AiBacktestsRepo.Default)),
  Layer.provideMerge(Layer.merge(AiTradersRepo.Default, ModelCalls.Default))
)
