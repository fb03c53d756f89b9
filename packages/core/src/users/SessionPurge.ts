import { Clock, Duration, Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { runPeriodic } from "../jobs/Leases.js"
import { UsersRepo } from "./UsersRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the sessions that expired or were revoked longer
 * ago than `retention.sessions` (`SESSION_RETENTION_DAYS`).
 */
export const SessionPurgeLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* UsersRepo
    yield* runPeriodic(
      "session-purge",
      retention.purgeInterval,
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => repo.purgeSessions(new Date(now - Duration.toMillis(retention.sessions)))
      )
    )
  })
)
