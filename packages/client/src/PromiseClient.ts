import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Socket from "@effect/platform/Socket"
import {
  type ChatRequest,
  errorCatalogue,
  type Exchange,
  type Issue,
  type MarketEvent,
  type OptimizationProgress
} from "@trading-platform/core/contract"
import { Effect, Either, Stream } from "effect"
import { type ClientOptions, makeClient, RequestInputError, type TradingClient } from "./Client.js"
import type { ChannelEvent, ChatEvent } from "./LiveStreams.js"

const statusByTag = new Map(errorCatalogue.map((row) => [row.name, { status: row.status, code: row.code }]))

/** Anything the Effect client can fail with, as far as this module needs to know. */
interface Failure {
  readonly _tag: string
  readonly message?: string
  readonly error?: string
  readonly request_id?: string | undefined
  readonly retry_after?: number
  readonly issues?: ReadonlyArray<Issue>
  readonly response?: { readonly status: number; readonly headers: Readonly<Record<string, string | undefined>> }
}

/**
 * Every failure of the Promise client: an error answered by the API (`status`, `code`, `request_id`
 * and, for 429, `retry_after` from the envelope), an answer outside the contract (`unexpected_response`
 * with its status), a request that never got an answer (`transport_error`, no status) or one
 * that was not sent because its input breaks the contract (`invalid_input`, no status, with `issues`).
 * The Effect client's error is kept as `cause`.
 */
export class TradingApiError extends Error {
  override readonly name = "TradingApiError"
  readonly status: number | undefined
  readonly code: string
  readonly request_id: string | undefined
  /** Seconds to wait before trying again (429 only). */
  readonly retry_after: number | undefined
  /** What is wrong with the input, one per field (`invalid_input` only). */
  readonly issues: ReadonlyArray<Issue> | undefined

  constructor(failure: Failure) {
    super(failure.error ?? failure.message ?? failure._tag, { cause: failure })
    const declared = statusByTag.get(failure._tag)
    this.status = declared?.status ?? failure.response?.status
    this.code = declared?.code ??
      (failure instanceof RequestInputError
        ? "invalid_input"
        : failure._tag === "RequestError"
        ? "transport_error"
        : "unexpected_response")
    this.issues = failure.issues
    this.request_id = failure.request_id ?? failure.response?.headers["x-request-id"]
    this.retry_after = failure.retry_after
  }
}

// The Promise client always answers the decoded value, so it takes no `withResponse` flag; and
// `urlParams` whose fields are all optional may be left out (HttpApiClient's own type demands the key).
type Relaxed<R> = R extends object ?
  R extends { readonly urlParams: infer U } ?
    {} extends U ? Omit<R, "withResponse" | "urlParams"> & { readonly urlParams?: U } : Omit<R, "withResponse">
  : Omit<R, "withResponse">
  : R
type PromiseMethod<F> = F extends (request: infer R) => Effect.Effect<infer A, any, any>
  ? {} extends Relaxed<R> ? (request?: Relaxed<R>) => Promise<Exclude<A, readonly [any, any]>>
  : (request: Relaxed<R>) => Promise<Exclude<A, readonly [any, any]>>
  : never

type LiveStreamKeys = "marketIntelligence" | "subscribe" | "assistantChat" | "optimizationProgress"

/**
 * The same groups and methods as `TradingClient`, answering Promises that reject with
 * `TradingApiError`; the live streams are async iterables (leave the `for await` to close them)
 * that reject with `LiveStreamError` once reconnecting has given up.
 */
export type PromiseClient =
  & {
    readonly [K in Exclude<keyof TradingClient, LiveStreamKeys>]: TradingClient[K] extends (...args: any) => any ?
      PromiseMethod<TradingClient[K]>
      : { readonly [M in keyof TradingClient[K]]: PromiseMethod<TradingClient[K][M]> }
  }
  & {
    readonly marketIntelligence: (
      symbols: ReadonlyArray<string>,
      params?: { readonly exchange?: Exchange }
    ) => AsyncIterable<MarketEvent>
    readonly subscribe: (channels: ReadonlyArray<string>) => AsyncIterable<ChannelEvent>
    readonly optimizationProgress: (programId: number, optimizationId: number) => AsyncIterable<OptimizationProgress>
    readonly assistantChat: (request: ChatRequest) => AsyncIterable<ChatEvent>
  }

export interface PromiseClientOptions extends ClientOptions {
  /** The WebSocket class for `subscribe`: the global one by default (browsers, Node 22+); on Node 20 pass `ws`'s. */
  readonly WebSocket?: (new(url: string, protocols?: string | Array<string>) => unknown) | undefined
}

// `urlParams: {}` stands in for left-out params; an endpoint without params ignores it.
const toPromise = (method: (request: unknown) => Effect.Effect<unknown, unknown>) => (request?: object) =>
  Effect.runPromise(Effect.either(method({ urlParams: {}, ...request }))).then(
    Either.getOrThrowWith((failure) => new TradingApiError(failure as Failure))
  )

/** The typed client for code that does not use Effect: every endpoint answers a Promise. Sends with `fetch`. */
export const createClient = (options: PromiseClientOptions): PromiseClient => {
  const { assistantChat, marketIntelligence, optimizationProgress, subscribe, ...client } = Effect.runSync(
    makeClient(options).pipe(Effect.provide(FetchHttpClient.layer))
  )
  const WebSocketClass = options.WebSocket ?? globalThis.WebSocket
  const live = {
    marketIntelligence: (symbols: ReadonlyArray<string>, params: { readonly exchange?: Exchange } = {}) =>
      Stream.toAsyncIterable(marketIntelligence(symbols, params)),
    assistantChat: (request: ChatRequest) => Stream.toAsyncIterable(assistantChat(request)),
    optimizationProgress: (programId: number, optimizationId: number) =>
      Stream.toAsyncIterable(optimizationProgress(programId, optimizationId)),
    subscribe: (channels: ReadonlyArray<string>) =>
      Stream.toAsyncIterable(
        subscribe(channels).pipe(
          Stream.provideService(
            Socket.WebSocketConstructor,
            (url, protocols) => new WebSocketClass(url, protocols) as globalThis.WebSocket
          )
        )
      )
  }
  return Object.assign(
    live,
    Object.fromEntries(
      Object.entries(client).map(([key, member]) => [
        key,
        typeof member === "function"
          ? toPromise(member as any)
          : Object.fromEntries(Object.entries(member as object).map(([name, method]) => [name, toPromise(method)]))
      ])
    )
  ) as unknown as PromiseClient
}
