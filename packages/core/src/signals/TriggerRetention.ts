import { Clock, Duration, Effect, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { runPeriodic } from "../jobs/Leases.js"
import { SignalsRepo } from "./SignalsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the triggers of the trigger log
 * that fired longer ago than `retention.triggers` (`TRIGGER_RETENTION_DAYS`); nothing when it is not set.
 */
export const TriggerRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    if (Option.isNone(retention.triggers)) return
    const keep = Duration.toMillis(retention.triggers.value)
    const repo = yield* SignalsRepo
    yield* runPeriodic(
      "trigger-retention",
      retention.purgeInterval,
      Effect.flatMap(Clock.currentTimeMillis, (now) => repo.purgeTriggers(new Date(now - keep)))
    )
  })
)
