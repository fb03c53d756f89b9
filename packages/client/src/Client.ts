import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import {
  type ChatRequest,
  type Exchange,
  type Issue,
  parseErrorIssues,
  type RetryOptions,
  summarizeIssues,
  TradingApi
} from "@trading-platform/core/contract"
import { Effect, Option, ParseResult, Schema, Stream } from "effect"
import { assistantChat, marketIntelligence, optimizationProgress, subscribe } from "./LiveStreams.js"
import { withRetry } from "./Retry.js"

export interface ClientOptions {
  /** Where the API is served; endpoints add `/api/...` to it (e.g. `http://127.0.0.1:3000`). */
  readonly baseUrl: string
  /** A session token from `POST /api/users/login`, sent as `Authorization: Bearer`. */
  readonly token?: string | undefined
  /** The retry rule's settings (5xx and 429 only), or `false` to never retry. Retries by default. */
  readonly retry?: RetryOptions | false | undefined
}

type RequestPart = "path" | "urlParams" | "payload"

/**
 * A request the client refused to send because its input breaks the contract (a value out of
 * range, a field of the wrong type). It is a `ParseError`, as the client's types declare, whose
 * `message` and `issues` say in plain words which field is wrong and why.
 */
export class RequestInputError extends ParseResult.ParseError {
  /** One per field, `path` starting with the part of the request (`payload.leverage`). */
  readonly issues: ReadonlyArray<Issue>

  constructor(part: RequestPart, error: ParseResult.ParseError) {
    super({ issue: error.issue })
    this.issues = parseErrorIssues(error).map((issue) => ({
      path: issue.path === "" ? part : `${part}.${issue.path}`,
      message: issue.message
    }))
  }

  override get message() {
    return `Invalid request, not sent: ${summarizeIssues(this.issues)}`
  }

  override toString() {
    return this.message
  }
}

/** Adds the bearer token and the retry rule to the HttpClient that HttpApiClient sends with. */
const transport = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const { retry, token } = options
  const authorized = token === undefined ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token))
  return retry === false ? authorized : withRetry(retry)(authorized)
}

type Method = (request?: Record<string, unknown>) => Effect.Effect<unknown, unknown>

/** Checks a request against the endpoint's schemas before HttpApiClient encodes it, so a bad one fails in plain words. */
const checked = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, method: Method): Method => {
  const parts = ([["path", endpoint.pathSchema], ["urlParams", endpoint.urlParamsSchema], [
    "payload",
    endpoint.payloadSchema
  ]] as const)
    .flatMap(([part, schema]) =>
      Option.isSome(schema)
        ? [{ part, encode: Schema.encodeUnknown(schema.value as Schema.Schema<unknown, unknown>) }]
        : []
    )
  return (request) =>
    Effect.zipRight(
      Effect.forEach(parts, ({ encode, part }) =>
        Effect.mapError(encode(request?.[part]), (error) => new RequestInputError(part, error)), { discard: true }),
      method(request)
    )
}

/**
 * The typed client of the whole contract, and the live streams: `marketIntelligence(symbols)` (the
 * SSE stream's decoded events), `optimizationProgress(programId, id)` (an optimisation's progress
 * until it ends) and `subscribe(channels)` (the WebSocket's events), all
 * reconnecting by the retry rule, and `assistantChat(request)` (the assistant's answer as it is written). Each request is checked against its schemas before it is sent.
 * Needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 */
export const makeClient = (options: ClientOptions) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const api = yield* HttpApiClient.make(TradingApi, { baseUrl: options.baseUrl, transformClient: transport(options) })
    const methods = api as unknown as Record<string, Method & Record<string, Method>>
    for (const group of Object.values(TradingApi.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        const owner = group.topLevel ? methods : methods[group.identifier]!
        owner[endpoint.name] = checked(endpoint, owner[endpoint.name]!)
      }
    }
    return Object.assign(api, {
      marketIntelligence: (symbols: ReadonlyArray<string>, params: { readonly exchange?: Exchange | undefined } = {}) =>
        marketIntelligence(options, symbols, params).pipe(Stream.provideService(HttpClient.HttpClient, http)),
      subscribe: (channels: ReadonlyArray<string>) => subscribe(options, channels),
      optimizationProgress: (programId: number, optimizationId: number) =>
        optimizationProgress(options, programId, optimizationId).pipe(
          Stream.provideService(HttpClient.HttpClient, http)
        ),
      assistantChat: (request: ChatRequest) =>
        assistantChat(options, request).pipe(Stream.provideService(HttpClient.HttpClient, http))
    })
  })

/** The client `makeClient` yields: one property per group (`users`), top-level endpoints as methods (`health`). */
export type TradingClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
