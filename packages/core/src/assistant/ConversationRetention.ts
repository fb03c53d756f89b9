import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { purgeOlderThan } from "../jobs/Leases.js"
import { ConversationsRepo } from "./ConversationsRepo.js"

/**
 * Deletes, once per `retention.purgeInterval` across all replicas, the conversations whose last
 * message is older than `retention.conversations` (`CONVERSATION_RETENTION_DAYS`); nothing when it is not set.
 */
export const ConversationRetentionLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { retention } = yield* PlatformConfig
    const repo = yield* ConversationsRepo
    yield* purgeOlderThan(
      "conversation-retention",
      retention.purgeInterval,
      retention.conversations,
      repo.purgeUntouched
    )
  })
)
