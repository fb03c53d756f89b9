import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { type RetryOptions, TradingApi } from "@trading-platform/core/contract"
import type { Effect } from "effect"
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

/** The typed client of the whole contract; needs an `HttpClient` (e.g. `FetchHttpClient.layer`). */
export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(TradingApi, { baseUrl: options.baseUrl, transformClient: transport(options) })

/** The client `makeClient` yields: one property per group (`users`), top-level endpoints as methods (`health`). */
export type TradingClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
