import { Effect, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { purgeOlderThan } from "../jobs/Leases.js"
import { UsersRepo } from "./UsersRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the sessions that expired or were revoked longer
 * ago than `retention.sessions` (`SESSION_RETENTION_DAYS`).
 */
export const SessionPurgeLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* UsersRepo
    yield* purgeOlderThan("session-purge", retention.purgeInterval, Option.some(retention.sessions), repo.purgeSessions)
  })
)
