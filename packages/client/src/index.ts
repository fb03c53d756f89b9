/**
 * Typed clients for the trading platform API, and the retry helper they use.
 *
 * @module @trading-platform/client
 */
/** The Effect client of the whole contract: `makeClient({ baseUrl, token?, retry? })`. */
export { type ClientOptions, makeClient, RequestInputError, type TradingClient } from "./Client.js"
/** The Promise client (`createClient`) and the Error subclass its Promises reject with. */
export { createClient, type PromiseClient, type PromiseClientOptions, TradingApiError } from "./PromiseClient.js"
/** An HttpClient transformer applying core's retry rule: 5xx and 429 only, `Retry-After` honoured. */
export { withRetry } from "./Retry.js"
/** The retry settings and the Schedule itself, for retrying any other Effect by the same rule. */
export { type RetryOptions, retrySchedule } from "@trading-platform/core/contract"
/** The live streams as Effect Streams (also on the clients): SSE market intelligence and assistant chat, WebSocket subscriptions. */
export {
  assistantChat,
  type ChannelEvent,
  type ChatEvent,
  LiveStreamError,
  type LiveStreamOptions,
  marketIntelligence,
  subscribe
} from "./LiveStreams.js"
