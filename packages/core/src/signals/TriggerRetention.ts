import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { purgeOlderThan } from "../jobs/Leases.js"
import { SignalsRepo } from "./SignalsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the triggers of the trigger log
 * that fired longer ago than `retention.triggers` (`TRIGGER_RETENTION_DAYS`); nothing when it is not set.
 */
export const TriggerRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* SignalsRepo
    yield* purgeOlderThan("trigger-retention", retention.purgeInterval, retention.triggers, repo.purgeTriggers)
  })
)
