import { Context, Data, type Stream } from "effect"
import type { JSONSchema } from "effect"

/** A tool call the model asked for: `arguments` is the model's raw JSON text, not yet trusted. */
export interface ModelToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** The conversation as the model sees it (the OpenAI chat shape, which compatible servers share). */
export type ModelMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: ReadonlyArray<ModelToolCall> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string }

export interface ModelToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: JSONSchema.JsonSchema7
}

/** What a model turn streams: text as it comes, the tool calls it wants, and its token usage when reported. */
export type ModelEvent = Data.TaggedEnum<{
  Text: { readonly text: string }
  ToolCall: ModelToolCall
  Usage: { readonly promptTokens: number; readonly completionTokens: number }
}>
export const ModelEvent = Data.taggedEnum<ModelEvent>()

/** The model failed; `code` is the catalogue's (`upstream_error`, `upstream_timeout`, `rate_limited`). */
export class ModelFailure extends Data.TaggedError("ModelFailure")<{
  readonly code: "upstream_error" | "upstream_timeout" | "rate_limited"
  readonly message: string
}> {}

/**
 * The language model behind the assistant, as a layer: the OpenAI-compatible provider or the
 * built-in offline analyst. One `turn` answers the conversation so far, or asks for tools.
 */
export class AssistantModel extends Context.Tag("@trading-platform/core/AssistantModel")<AssistantModel, {
  /** Shown to users, e.g. `built-in analyst` or the provider's model name. */
  readonly name: string
  readonly turn: (
    messages: ReadonlyArray<ModelMessage>,
    tools: ReadonlyArray<ModelToolSpec>
  ) => Stream.Stream<ModelEvent, ModelFailure>
}>() {}
