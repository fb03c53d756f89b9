import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { purgeOlderThan } from "../jobs/Leases.js"
import { BacktestsRepo } from "./BacktestsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the backtests that finished longer ago than
 * `retention.backtests` (`BACKTEST_RETENTION_DAYS`); nothing when it is not set.
 */
export const BacktestRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* BacktestsRepo
    yield* purgeOlderThan("backtest-retention", retention.purgeInterval, retention.backtests, repo.purgeFinished)
  })
)
