import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, Socket } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import {
  BacktestId,
  BacktestProgressFeed,
  type CurrentUserShape,
  type HubUpdate,
  InvalidInput,
  MarketData,
  MarketHub,
  PlatformConfig,
  Unauthorized,
  Users,
  WsClientMessage,
  type WsServerMessage
} from "@trading-platform/core"
import {
  Clock,
  Deferred,
  Duration,
  Effect,
  Either,
  FiberMap,
  Option,
  Queue,
  Runtime,
  Schema,
  Scope,
  Stream
} from "effect"
import type { IncomingMessage } from "node:http"
import { presentedToken } from "../http/PresentedToken.js"
import { type StreamLease, StreamLeases } from "./StreamLeases.js"
import { capIncomingMessages, onCloseFrame } from "./WebSocketFrames.js"

/** A socket whose unsent data passes this (a consumer that does not read) is closed with 1013. */
export const maxBufferedBytes = 1024 * 1024
const messageWindow = Duration.toMillis("1 minute")

const policyViolation = 1008
const messageTooBig = 1009
const tryAgainLater = 1013
const goingAway = 1001

/** One of its IP address's places for sockets that have not authenticated yet, or none left. */
interface UnauthenticatedPlace {
  readonly admitted: boolean
  /** Gives the place back (once authenticated; else when the socket ends). */
  readonly release: Effect.Effect<void>
}

/** The connection an upgraded socket came from. */
interface Connection {
  readonly request: IncomingMessage
  readonly connectedAt: number
  /** Held while a socket without a token in its request has not authenticated. */
  readonly place: Option.Option<UnauthenticatedPlace>
}

const decodeMessage = Schema.decodeEither(Schema.parseJson(WsClientMessage))
const parseChannel = (channel: string) => {
  if (channel === "triggers") return { kind: "triggers" } as const
  const prices = /^prices:([A-Za-z0-9]{1,20})$/.exec(channel)
  if (prices) return { kind: "prices", symbol: prices[1]!.toUpperCase() } as const
  const news = /^news:([A-Za-z0-9]{1,20})$/.exec(channel)
  if (news) return { kind: "news", symbol: news[1]!.toUpperCase() } as const
  const backtest = /^backtest:(\d{1,15})$/.exec(channel)
  if (backtest && Schema.is(BacktestId)(Number(backtest[1]))) {
    return { kind: "backtest", id: BacktestId.make(Number(backtest[1])) } as const
  }
  return undefined
}

/**
 * `GET /api/ws` (DESIGN §4 "Streams"): a WebSocket carrying subscriptions to `prices:{SYMBOL}`
 * (venue1), `news:{SYMBOL}`, `triggers` and `backtest:{id}`. The token comes in the query (`?session_token=`) or
 * the `Authorization` header, when it is checked before upgrading (401 / 429 answer the envelope),
 * or as a first `{type:"auth", token}` message within `websocket.authTimeout` of connecting. It
 * holds the token's stream lease while open. What a socket may cost is bounded (`WebSocketOptions`,
 * close codes in docs/streams.md): a message over the size cap closes 1009; past the configured
 * messages a minute, an error frame and 1008; past the messages waiting to be handled, 1013; a
 * socket past its IP's unauthenticated sockets, 1013 at once.
 */
export const WebSocketLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const users = yield* Users
    const leases = yield* StreamLeases
    const hub = yield* MarketHub
    const progress = yield* BacktestProgressFeed
    const market = yield* MarketData
    const { rateLimits, trustProxy, websocket } = yield* PlatformConfig
    const messageLimit = rateLimits.websocket_messages_per_min

    const clientIp = (request: HttpServerRequest.HttpServerRequest) =>
      (trustProxy && request.headers["x-forwarded-for"]?.split(",")[0]?.trim()) ||
      Option.getOrElse(request.remoteAddress, () => "unknown")

    // Sockets that have not authenticated yet, per IP address.
    const unauthenticated = new Map<string, number>()
    const unauthenticatedPlace = (ip: string): Effect.Effect<UnauthenticatedPlace, never, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const held = unauthenticated.get(ip) ?? 0
          if (held >= websocket.maxUnauthenticatedPerIp) return { admitted: false, release: Effect.void }
          unauthenticated.set(ip, held + 1)
          let released = false
          const release = Effect.sync(() => {
            if (released) return
            released = true
            const left = (unauthenticated.get(ip) ?? 1) - 1
            if (left === 0) unauthenticated.delete(ip)
            else unauthenticated.set(ip, left)
          })
          return { admitted: true, release }
        }),
        (place) => place.release
      )

    /** One connection after upgrading; `authenticated` is set when the token came with the request. */
    const session = (
      socket: Socket.Socket,
      authenticated: Option.Option<{ readonly caller: CurrentUserShape; readonly lease: StreamLease }>,
      connection: Connection
    ) =>
      Effect.gen(function*() {
        const write = yield* socket.writer
        // Messages received and not yet handled; one more than it holds closes the socket.
        const inbox = yield* Queue.dropping<string>(websocket.maxQueuedMessages)
        const closed = yield* Deferred.make<void>()
        let raw: globalThis.WebSocket | undefined
        let count = 0
        let windowStart = 0
        // A client that sends its close frame is done: its lease goes then, not after the closing handshake.
        const runFork = Runtime.runFork(yield* Effect.runtime<never>())
        let held = Option.getOrUndefined(Option.map(authenticated, (a) => a.lease))
        let closing = false
        const clientClosing = () => {
          closing = true
          if (held !== undefined) runFork(held.release)
        }

        const send = (message: WsServerMessage) =>
          Effect.suspend(() =>
            raw !== undefined && raw.bufferedAmount > maxBufferedBytes
              ? close(tryAgainLater, "The client does not read fast enough")
              : Effect.ignore(write(JSON.stringify(message)))
          )
        const close = (code: number, reason: string) =>
          Effect.zipRight(
            Effect.ignore(write(new Socket.CloseEvent(code, reason))),
            Deferred.succeed(closed, undefined)
          )
        const fail = (code: string, error: string, channel: string | null = null) =>
          send({ type: "error", channel, code, error })
        /** An error frame, then the close; nothing more happens on the socket. */
        const refuse = (code: string, error: string, closeCode: number, reason: string) =>
          fail(code, error).pipe(Effect.zipRight(close(closeCode, reason)), Effect.zipRight(Effect.never))

        // Counted as they arrive, so a flood is cut off however far behind the handling is.
        const receive = (data: string | Uint8Array) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            if (now - windowStart >= messageWindow) {
              windowStart = now
              count = 0
            }
            if (++count > messageLimit) {
              return count === messageLimit + 1
                ? Effect.zipRight(
                  fail("rate_limited", `More than ${messageLimit} messages a minute`),
                  close(policyViolation, "Message rate limit exceeded")
                )
                : Effect.void
            }
            // `ws` refuses a larger frame before reading it (`capIncomingMessages`); this holds should it not.
            const size = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength
            if (size > websocket.maxMessageBytes) return close(messageTooBig, "Message too big")
            return Queue.offer(inbox, typeof data === "string" ? data : new TextDecoder().decode(data)).pipe(
              Effect.flatMap((queued) =>
                queued ? Effect.void : Effect.zipRight(
                  fail(
                    "rate_limited",
                    `More than ${websocket.maxQueuedMessages} messages are waiting to be handled; wait for the answers`
                  ),
                  close(tryAgainLater, "Too many messages waiting")
                )
              )
            )
          }).pipe(Effect.zipLeft(Effect.map(Effect.serviceOption(Socket.WebSocket), (ws) => {
            raw = Option.getOrUndefined(ws)
          })))

        /** The token of the first message, checked; each failure closes the socket. */
        const authenticateByMessage = Effect.gen(function*() {
          const message = decodeMessage(yield* Queue.take(inbox))
          if (Either.isLeft(message) || message.right.type !== "auth") {
            return yield* refuse(
              "unauthorized",
              "The first message must be {\"type\":\"auth\",\"token\":...} when the token is not in the query",
              policyViolation,
              "Authentication required"
            )
          }
          const token = message.right.token
          const caller = yield* users.authenticate(token).pipe(
            Effect.catchTag(
              "Unauthorized",
              (e) => refuse("unauthorized", e.error, policyViolation, "Authentication failed")
            )
          )
          const lease = yield* leases.acquire(token).pipe(
            Effect.catchTag(
              "RateLimited",
              (e) => refuse("rate_limited", e.error, policyViolation, "Another stream is open")
            )
          )
          return { caller, lease }
        })

        const authenticate = Effect.gen(function*() {
          if (Option.isSome(authenticated)) return authenticated.value
          if (Option.isSome(connection.place) && !connection.place.value.admitted) {
            return yield* refuse(
              "rate_limited",
              `More than ${websocket.maxUnauthenticatedPerIp} sockets from this address are waiting to authenticate`,
              tryAgainLater,
              "Too many unauthenticated sockets"
            )
          }
          // The time to authenticate runs from the request, however long the upgrade took.
          const elapsed = (yield* Clock.currentTimeMillis) - connection.connectedAt
          const left = Math.max(0, Duration.toMillis(websocket.authTimeout) - elapsed)
          const outcome = yield* Effect.timeoutOption(authenticateByMessage, Duration.millis(left))
          if (Option.isNone(outcome)) {
            return yield* refuse(
              "unauthorized",
              `No token within ${Duration.format(websocket.authTimeout)}`,
              policyViolation,
              "Authentication timeout"
            )
          }
          yield* Option.match(connection.place, { onNone: () => Effect.void, onSome: (place) => place.release })
          return outcome.value
        })

        const serve = Effect.gen(function*() {
          const { caller, lease } = yield* authenticate
          held = lease
          if (closing) yield* lease.release
          // A token revoked meanwhile closes the socket as a refused one would.
          yield* lease.ended.pipe(
            Effect.flatMap((reason) =>
              Effect.zipRight(fail("unauthorized", reason.error), close(policyViolation, "Session ended"))
            ),
            Effect.forkScoped
          )
          const mailbox = yield* hub.mailbox(caller.id)
          const backtests = yield* FiberMap.make<string>()
          const subscribed = new Set<string>()
          // A story goes to each subscribed `news:` channel of a symbol it mentions.
          const newsSymbols = new Set<string>()
          const eventsOf = (update: HubUpdate): Array<WsServerMessage> =>
            update.kind === "trigger"
              ? [{ type: "event", channel: "triggers", data: update.trigger }]
              : update.kind === "price"
              ? [{ type: "event", channel: `prices:${update.symbol}`, data: update }]
              : update.kind === "heartbeat"
              ? []
              : update.item.symbols.filter((symbol) => newsSymbols.has(symbol)).map((symbol) => ({
                type: "event",
                channel: `news:${symbol}`,
                data: update.item
              }))

          // Prices, triggers and stories, as the hub hands them over; a stream that fell behind is closed.
          yield* mailbox.take.pipe(
            Effect.flatMap((updates) => Effect.forEach(updates.flatMap(eventsOf), send, { discard: true })),
            Effect.forever,
            Effect.catchTags({
              MailboxOverflow: () => close(tryAgainLater, "The client fell behind"),
              MailboxClosed: () => close(goingAway, "Server shutting down")
            }),
            Effect.forkScoped
          )

          const subscribe = (channel: string) =>
            Effect.gen(function*() {
              const parsed = parseChannel(channel)
              if (parsed === undefined) {
                return yield* fail(
                  "invalid_input",
                  "channel must be prices:{SYMBOL}, news:{SYMBOL}, triggers or backtest:{id}",
                  channel
                )
              }
              if (subscribed.has(channel)) return yield* send({ type: "subscribed", channel })
              switch (parsed.kind) {
                case "triggers":
                  yield* mailbox.watchTriggers
                  break
                case "prices":
                case "news": {
                  const listed = yield* Effect.either(market.listed("venue1", [parsed.symbol]))
                  if (Either.isLeft(listed)) {
                    const { _tag, error } = listed.left
                    const code = _tag === "SymbolNotListed"
                      ? "symbol_not_listed"
                      : _tag === "UpstreamTimeout"
                      ? "upstream_timeout"
                      : "upstream_error"
                    return yield* fail(code, error, channel)
                  }
                  yield* (parsed.kind === "prices"
                    ? mailbox.watchPrice("venue1", parsed.symbol)
                    : Effect.zipRight(
                      Effect.sync(() => newsSymbols.add(parsed.symbol)),
                      mailbox.watchNews(parsed.symbol)
                    ))
                  break
                }
                case "backtest": {
                  const stream = yield* Effect.either(progress.watch(caller, parsed.id))
                  if (Either.isLeft(stream)) {
                    return yield* fail(
                      stream.left._tag === "Forbidden" ? "forbidden" : "not_found",
                      stream.left.error,
                      channel
                    )
                  }
                  yield* FiberMap.run(
                    backtests,
                    channel,
                    Stream.runForEach(stream.right, (data) => send({ type: "event", channel, data }))
                  )
                }
              }
              subscribed.add(channel)
              yield* send({ type: "subscribed", channel })
            })

          const unsubscribe = (channel: string) =>
            Effect.gen(function*() {
              const parsed = parseChannel(channel)
              if (parsed?.kind === "triggers") {
                yield* mailbox.unwatchTriggers
              }
              if (parsed?.kind === "prices") yield* mailbox.unwatchPrice("venue1", parsed.symbol)
              if (parsed?.kind === "news") {
                newsSymbols.delete(parsed.symbol)
                yield* mailbox.unwatchNews(parsed.symbol)
              }
              if (parsed?.kind === "backtest") yield* FiberMap.remove(backtests, channel)
              subscribed.delete(channel)
              yield* send({ type: "unsubscribed", channel })
            })

          for (;;) {
            const message = decodeMessage(yield* Queue.take(inbox))
            if (Either.isLeft(message)) {
              yield* fail("invalid_input", "Messages are JSON: {type: subscribe|unsubscribe, channel} or {type: ping}")
              continue
            }
            const m = message.right
            if (m.type === "ping") yield* send({ type: "pong", channel: null })
            else if (m.type === "subscribe") yield* subscribe(m.channel)
            else if (m.type === "unsubscribe") yield* unsubscribe(m.channel)
            else yield* fail("invalid_input", "Already authenticated")
          }
        })

        const capFrames = Effect.suspend(() =>
          capIncomingMessages(connection.request, websocket.maxMessageBytes) &&
            onCloseFrame(connection.request, clientClosing)
            ? Effect.void
            : Effect.logWarning("WebSocket messages are not capped before they are read (ws internals changed)")
        )

        yield* Effect.raceFirst(
          Effect.raceFirst(socket.runRaw(receive, { onOpen: capFrames }), Deferred.await(closed)),
          serve
        ).pipe(
          // The server is stopping (not the client leaving, which ends runRaw first).
          Effect.onInterrupt(() => Effect.ignore(write(new Socket.CloseEvent(goingAway, "Server shutting down")))),
          Effect.catchTag("SocketError", () => Effect.void)
        )
      }).pipe(Effect.scoped)

    yield* router.get(
      "/api/ws",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const presented = presentedToken(request)
        if (presented._tag === "Malformed") {
          return yield* new Unauthorized({
            error: "Authorization must be 'Bearer <session token>'",
            reason: "token_invalid"
          })
        }
        // A token in the request is checked before upgrading, so its failures answer HTTP errors.
        const authenticated = presented._tag === "Token"
          ? Option.some({
            caller: yield* users.authenticate(presented.token),
            lease: yield* leases.acquire(presented.token)
          })
          : Option.none()
        const connectedAt = yield* Clock.currentTimeMillis
        // A socket without a token in its request holds one of its address's places until it authenticates.
        const place = Option.isNone(authenticated)
          ? Option.some(yield* unauthenticatedPlace(clientIp(request)))
          : Option.none()
        // A request that is no upgrade, or a host that cannot upgrade (a fetch-style handler).
        const socket = yield* request.upgrade.pipe(
          Effect.catchTag("RequestError", () =>
            new InvalidInput({
              error:
                "GET /api/ws opens a WebSocket: send it as an upgrade (Upgrade: websocket) to a server that serves WebSockets",
              issues: [{ path: "upgrade", message: "must be websocket" }]
            }))
        )
        yield* session(socket, authenticated, {
          request: NodeHttpServerRequest.toIncomingMessage(request),
          connectedAt,
          place
        })
        return HttpServerResponse.empty()
      }).pipe(Effect.scoped)
    )
  })
)
