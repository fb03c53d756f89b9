import { Clock, Duration, Effect, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { runPeriodic } from "../jobs/Leases.js"
import { ConversationsRepo } from "./ConversationsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the conversations whose last
 * message is older than `retention.conversations` (`CONVERSATION_RETENTION_DAYS`); nothing when it is not set.
 */
export const ConversationRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    if (Option.isNone(retention.conversations)) return
    const keep = Duration.toMillis(retention.conversations.value)
    const repo = yield* ConversationsRepo
    yield* runPeriodic(
      "conversation-retention",
      retention.purgeInterval,
      Effect.flatMap(Clock.currentTimeMillis, (now) => repo.purgeUntouched(new Date(now - keep)))
    )
  })
)
