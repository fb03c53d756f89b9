import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { AssistantChat } from "./AssistantChat.js"
import { AssistantToolsLive } from "./AssistantTools.js"
import { ConversationRetentionLive } from "./ConversationRetention.js"
import { ConversationsRepo } from "./ConversationsRepo.js"
import { Insights } from "./Insights.js"
import { InsightsRepo } from "./InsightsRepo.js"
import { InsightWorkersLive } from "./InsightWorkers.js"
import { OfflineAnalyst } from "./OfflineAnalyst.js"
import { OpenAiCompatibleModel } from "./OpenAiCompatibleModel.js"

export { AssistantChat, ChatEvent } from "./AssistantChat.js"
export * from "./AssistantModel.js"
export { AssistantToolkit, AssistantToolsLive, ToolFailure } from "./AssistantTools.js"
export { analyse, type InsightFacts } from "./InsightAnalysis.js"
export { Insights } from "./Insights.js"
export { OfflineAnalyst, offlineAnalystName } from "./OfflineAnalyst.js"
export { makeOpenAiCompatibleModel, OpenAiCompatibleModel, type ProviderOptions } from "./OpenAiCompatibleModel.js"

/** The configured OpenAI-compatible provider, else the built-in offline analyst. */
export const AssistantModelLive = Layer.unwrapEffect(
  Effect.map(PlatformConfig, ({ assistant }) =>
    Option.match(assistant.provider, {
      onNone: () => OfflineAnalyst,
      onSome: (provider) =>
        OpenAiCompatibleModel({ ...provider, timeout: assistant.timeout }).pipe(Layer.provide(FetchHttpClient.layer))
    }))
)

/**
 * The assistant: conversations, quotas and the chat loop on the configured model, with its tools
 * running as the caller through the other features' services (which it needs); and insight jobs,
 * with this instance's workers running for as long as the layer lives, and the purge of old conversations.
 */
export const AssistantLive = Layer.mergeAll(Insights.Default, InsightWorkersLive, ConversationRetentionLive).pipe(
  Layer.provideMerge(InsightsRepo.Default),
  Layer.provideMerge(AssistantChat.Default),
  Layer.provideMerge(Layer.mergeAll(ConversationsRepo.Default, AssistantModelLive, AssistantToolsLive))
)
