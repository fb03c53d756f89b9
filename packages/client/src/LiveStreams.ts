import * as Sse from "@effect/experimental/Sse"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Socket from "@effect/platform/Socket"
import {
  type ChatRequest,
  type Exchange,
  isRetryableStatus,
  MarketEvent,
  OptimizationProgress,
  parseRetryAfter,
  type RetryOptions,
  retrySchedule,
  WsServerMessage
} from "@trading-platform/core/contract"
import { Clock, Data, type Duration, Effect, Option, Schema, Stream } from "effect"

/**
 * Why a live stream stopped. `retryable` failures (the connection dropped or the server ended the
 * stream, a 5xx, a 429) are retried by the retry rule before they reach you; the others (a 4xx,
 * a WebSocket closed for breaking its rules, a channel refused) end the stream at once. Its
 * `message` says what failed in one line: the HTTP status with the envelope's code and text, the
 * WebSocket's close code and reason, or the error frame's code, text and channel.
 */
export class LiveStreamError extends Data.TaggedError("LiveStreamError")<{
  /** The server's own words (the envelope's or the error frame's `error`), or what went wrong on the way. */
  readonly error: string
  /** The error envelope's code (`unauthorized`, `rate_limited`, …), `transport_error` or `stream_ended`. */
  readonly code: string
  /** The HTTP status, when the server refused the stream with one. */
  readonly status?: number | undefined
  /** The WebSocket close code, when the server closed it. */
  readonly closeCode?: number | undefined
  /** The reason the server gave with its close code. */
  readonly closeReason?: string | undefined
  /** The channel an error frame was about. */
  readonly channel?: string | null | undefined
  readonly retryable: boolean
  /** The server's `Retry-After`, for a 429 or 503. */
  readonly retryAfter: Option.Option<Duration.Duration>
}> {
  override get message(): string {
    const about = this.channel ? ` (channel ${this.channel})` : ""
    return this.status !== undefined
      ? `HTTP ${this.status} ${this.code}: ${this.error}`
      : `${this.code}: ${this.error}${about}`
  }
}

// Stream.retry resets the schedule once an element gets through, so each outage starts from 1 s.
const retrying = (options: RetryOptions | false | undefined) => <A, R>(stream: Stream.Stream<A, LiveStreamError, R>) =>
  options === false ? stream : Stream.retry(stream, retrySchedule((e: LiveStreamError) => e, options))

export interface LiveStreamOptions {
  readonly baseUrl: string
  readonly token?: string | undefined
  /** The retry rule applied to reconnections, or `false` to stop at the first drop. */
  readonly retry?: RetryOptions | false | undefined
}

const ended = (what: string) =>
  new LiveStreamError({ error: `${what} ended`, code: "stream_ended", retryable: true, retryAfter: Option.none() })

const asLiveStreamError = (e: unknown) =>
  e instanceof LiveStreamError ? e : new LiveStreamError({
    error: String((e as Error).message ?? e),
    code: "transport_error",
    retryable: true,
    retryAfter: Option.none()
  })

/** Sends `request` and answers its Server-Sent Events; an answer other than 200 fails with its envelope's code. */
const sseEvents = (http: HttpClient.HttpClient, request: HttpClientRequest.HttpClientRequest) =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const response = yield* http.execute(request).pipe(
      Effect.mapError((e) =>
        new LiveStreamError({ error: e.message, code: "transport_error", retryable: true, retryAfter: Option.none() })
      )
    )
    if (response.status !== 200) {
      const body = yield* Effect.orElseSucceed(response.json, () => ({})) as Effect.Effect<any>
      const now = yield* Clock.currentTimeMillis
      const envelope = typeof body?.code === "string" && typeof body?.error === "string"
      return yield* new LiveStreamError({
        error: envelope ? body.error : "The server answered without the error envelope",
        code: envelope ? body.code : "unexpected_response",
        status: response.status,
        retryable: isRetryableStatus(response.status),
        retryAfter: parseRetryAfter(response.headers["retry-after"], now)
      })
    }
    return response.stream.pipe(Stream.decodeText(), Stream.pipeThroughChannel(Sse.makeChannel()))
  }))

/**
 * `GET /api/market-intelligence/stream` as a Stream of decoded events. When the connection drops
 * or the server ends the stream, it reconnects by the retry rule with `Last-Event-ID`, so no
 * trigger in between is lost; the new connection starts with a fresh `snapshot`.
 */
export const marketIntelligence = (
  options: LiveStreamOptions,
  symbols: ReadonlyArray<string>,
  params: { readonly exchange?: Exchange | undefined } = {}
): Stream.Stream<MarketEvent, LiveStreamError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.map(HttpClient.HttpClient, (http) => {
    let lastEventId: string | undefined
    const decode = Schema.decodeUnknown(MarketEvent)
    const connect = Stream.suspend(() => {
      let request = HttpClientRequest.get(`${options.baseUrl}/api/market-intelligence/stream`).pipe(
        HttpClientRequest.setUrlParam("symbols", symbols.join(",")),
        HttpClientRequest.setHeader("accept", "text/event-stream")
      )
      if (params.exchange) request = HttpClientRequest.setUrlParam(request, "exchange", params.exchange)
      if (options.token) request = HttpClientRequest.bearerToken(request, options.token)
      if (lastEventId !== undefined) request = HttpClientRequest.setHeader(request, "last-event-id", lastEventId)
      return sseEvents(http, request).pipe(
        Stream.mapEffect((event) => decode({ event: event.event, id: event.id ?? "", data: JSON.parse(event.data) })),
        Stream.tap((event) =>
          Effect.sync(() => {
            lastEventId = event.id
          })
        ),
        Stream.mapError(asLiveStreamError),
        Stream.concat(Stream.fail(ended("The market-intelligence stream")))
      )
    })
    return retrying(options.retry)(connect)
  }))

const finished = (p: OptimizationProgress) =>
  p.status === "completed" || p.status === "failed" || p.status === "cancelled"

/**
 * `GET /api/programs/{id}/optimizations/{optimization_id}/stream` as a Stream of decoded progress
 * events, ending after the final status. A connection that drops before then reconnects by the
 * retry rule; the new one starts with the progress as it is then.
 */
export const optimizationProgress = (
  options: LiveStreamOptions,
  programId: number,
  optimizationId: number
): Stream.Stream<OptimizationProgress, LiveStreamError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.map(HttpClient.HttpClient, (http) => {
    const decode = Schema.decodeUnknown(OptimizationProgress)
    let request = HttpClientRequest.get(
      `${options.baseUrl}/api/programs/${programId}/optimizations/${optimizationId}/stream`
    ).pipe(HttpClientRequest.setHeader("accept", "text/event-stream"))
    if (options.token) request = HttpClientRequest.bearerToken(request, options.token)
    let done = false
    const connect = Stream.suspend(() =>
      sseEvents(http, request).pipe(
        Stream.mapEffect((event) => decode(JSON.parse(event.data))),
        Stream.tap((progress) => Effect.sync(() => (done = finished(progress)))),
        Stream.mapError(asLiveStreamError),
        Stream.concat(Stream.suspend(() => done ? Stream.empty : Stream.fail(ended("The optimisation's stream"))))
      )
    )
    return retrying(options.retry)(connect).pipe(Stream.takeUntil(finished))
  }))

/** One event of the assistant's streamed answer: `delta`, `tool_call`, `tool_result`, then `done` or `error`. */
export interface ChatEvent {
  readonly event: string
  readonly data: unknown
}

/**
 * `POST /api/ai/chat` as a Stream of its events, as the assistant writes them. A chat is not
 * retried: sending the message again would ask the question twice.
 */
export const assistantChat = (
  options: LiveStreamOptions,
  request: ChatRequest
): Stream.Stream<ChatEvent, LiveStreamError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.map(HttpClient.HttpClient, (http) => {
    let post = HttpClientRequest.post(`${options.baseUrl}/api/ai/chat`).pipe(
      HttpClientRequest.setHeader("accept", "text/event-stream"),
      HttpClientRequest.bodyUnsafeJson(request)
    )
    if (options.token) post = HttpClientRequest.bearerToken(post, options.token)
    return sseEvents(http, post).pipe(
      Stream.mapEffect((event) => Effect.try((): ChatEvent => ({ event: event.event, data: JSON.parse(event.data) }))),
      Stream.mapError(asLiveStreamError)
    )
  }))

/** One event of a WebSocket subscription. */
export interface ChannelEvent {
  readonly channel: string
  readonly data: unknown
}

/** What a close code means (RFC 6455 §7.4.1), for a close that came without a reason. */
const closeMeaning = (code: number): string =>
  ({
    1000: "closed normally",
    1001: "the server is going away",
    1006: "the connection dropped without a close frame",
    1008: "a policy was broken",
    1009: "a message was too big",
    1011: "the server failed",
    1013: "the server is busy; try again later"
  })[code] ?? "no reason given"

/** What a socket error says happened (a refused upgrade answers `Unexpected server response: 404`). */
const socketFailure = (e: Socket.SocketError): string => {
  const cause = (e as { readonly cause?: unknown }).cause
  const said = cause instanceof Error
    ? cause.message
    : typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : ""
  return said || e.message
}

/**
 * A WebSocket that did not open. Where the WebSocket class tells the status of a refused upgrade
 * (`ws` does; browsers tell nothing), it is kept and retried by the rule for HTTP answers: a 404
 * (a host that does not route the upgrade) ends the stream at once instead of retrying.
 */
const upgradeFailure = (url: string, said: string) => {
  const refused = /Unexpected server response: (\d{3})/.exec(said)
  const status = refused ? Number(refused[1]) : undefined
  return new LiveStreamError({
    error: status === undefined
      ? `The WebSocket to ${url} failed: ${said}`
      : `The server refused to upgrade ${url} to a WebSocket`,
    code: "transport_error",
    status,
    retryable: status === undefined || isRetryableStatus(status),
    retryAfter: Option.none()
  })
}

// Closed for breaking the rules (1008) or for a message over the server's cap (1009): reconnecting
// would break them again. 1013 (the server is busy) and 1001 (it went away) are worth another try.
const retryableClose = (code: number) => code !== 1000 && code !== 1008 && code !== 1009

/**
 * `GET /api/ws` subscribed to `channels` (`prices:{SYMBOL}`, `triggers`, `backtest:{id}`), as a
 * Stream of their events. The token goes in the first message, not the URL. When the socket drops
 * (or the server goes away, 1001) it reconnects by the retry rule and subscribes again. Needs a
 * `Socket.WebSocketConstructor`: `Socket.layerWebSocketConstructorGlobal` where `WebSocket` is
 * global (browsers, Node 22+), `NodeSocket.layerWebSocketConstructor` on Node 20.
 */
export const subscribe = (
  options: LiveStreamOptions,
  channels: ReadonlyArray<string>
): Stream.Stream<ChannelEvent, LiveStreamError, Socket.WebSocketConstructor> => {
  const url = `${options.baseUrl.replace(/^http/, "ws")}/api/ws`
  const decode = Schema.decodeUnknownOption(Schema.parseJson(WsServerMessage))
  const connect = Stream.asyncScoped<ChannelEvent, LiveStreamError, Socket.WebSocketConstructor>((emit) =>
    Effect.gen(function*() {
      const socket = yield* Socket.makeWebSocket(url, { closeCodeIsError: () => true })
      const write = yield* socket.writer
      const hello = [
        ...(options.token ? [{ type: "auth", token: options.token }] : []),
        ...channels.map((channel) => ({ type: "subscribe", channel }))
      ]
      yield* socket.runRaw((raw) => {
        const message = decode(typeof raw === "string" ? raw : new TextDecoder().decode(raw))
        if (Option.isNone(message)) return
        const m = message.value
        if (m.type === "event") emit.single({ channel: m.channel, data: m.data })
        if (m.type === "error") {
          emit.fail(
            new LiveStreamError({
              error: m.error,
              code: m.code,
              channel: m.channel,
              retryable: m.code === "rate_limited",
              retryAfter: Option.none()
            })
          )
        }
      }, { onOpen: Effect.forEach(hello, (m) => Effect.ignore(write(JSON.stringify(m))), { discard: true }) }).pipe(
        Effect.catchAll((e) =>
          Effect.sync(() =>
            emit.fail(
              Socket.SocketCloseError.is(e)
                ? new LiveStreamError({
                  error: `The WebSocket closed with ${e.code} (${e.closeReason || closeMeaning(e.code)})`,
                  code: "stream_ended",
                  closeCode: e.code,
                  closeReason: e.closeReason || undefined,
                  retryable: retryableClose(e.code),
                  retryAfter: Option.none()
                })
                : upgradeFailure(url, socketFailure(e))
            )
          )
        ),
        Effect.forkScoped
      )
    })
  )
  return retrying(options.retry)(connect)
}
