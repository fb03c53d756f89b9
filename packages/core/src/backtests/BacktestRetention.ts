import { Clock, Duration, Effect, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { runPeriodic } from "../jobs/Leases.js"
import { BacktestsRepo } from "./BacktestsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the backtests that finished longer ago than
 * `retention.backtests` (`BACKTEST_RETENTION_DAYS`); nothing when it is not set.
 */
export const BacktestRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    if (Option.isNone(retention.backtests)) return
    const keep = Duration.toMillis(retention.backtests.value)
    const repo = yield* BacktestsRepo
    yield* runPeriodic(
      "backtest-retention",
      retention.purgeInterval,
      Effect.flatMap(Clock.currentTimeMillis, (now) => repo.purgeFinished(new Date(now - keep)))
    )
  })
)
