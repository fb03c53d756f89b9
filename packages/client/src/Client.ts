import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { type RetryOptions, TradingApi } from "@trading-platform/core/contract"
import { type Exchange } from "@trading-platform/core/contract"
import { Effect, Stream } from "effect"
import { marketIntelligence, subscribe } from "./LiveStreams.js"
import { withRetry } from "./Retry.js"

export interface ClientOptions {
  /** Where the API is served; endpoints add `/api/...` to it (e.g. `http://127.0.0.1:3000`). */
  readonly baseUrl: string
  /** A session token from `POST /api/users/login`, sent as `Authorization: Bearer`. */
  readonly token?: string | undefined
  /** The retry rule's settings (5xx and 429 only), or `false` to never retry. Retries by default. */
  readonly retry?: RetryOptions | false | undefined
}

/** Adds the bearer token and the retry rule to the HttpClient that HttpApiClient sends with. */
const transport = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const { retry, token } = options
  const authorized = token === undefined ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token))
  return retry === false ? authorized : withRetry(retry)(authorized)
}

/**
 * The typed client of the whole contract, and the live streams: `marketIntelligence(symbols)` (the
 * SSE stream's decoded events) and `subscribe(channels)` (the WebSocket's events), both
 * reconnecting by the retry rule. Needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 */
export const makeClient = (options: ClientOptions) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const api = yield* HttpApiClient.make(TradingApi, { baseUrl: options.baseUrl, transformClient: transport(options) })
    return Object.assign(api, {
      marketIntelligence: (symbols: ReadonlyArray<string>, params: { readonly exchange?: Exchange | undefined } = {}) =>
        marketIntelligence(options, symbols, params).pipe(Stream.provideService(HttpClient.HttpClient, http)),
      subscribe: (channels: ReadonlyArray<string>) => subscribe(options, channels)
    })
  })

/** The client `makeClient` yields: one property per group (`users`), top-level endpoints as methods (`health`). */
export type TradingClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
