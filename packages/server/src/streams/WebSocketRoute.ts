import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, Socket } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import {
  AccountId,
  Accounts,
  BacktestId,
  BacktestProgressFeed,
  type CurrentUserShape,
  type Forbidden,
  type HubUpdate,
  InvalidInput,
  type MailboxClosed,
  type MailboxOverflow,
  MarketData,
  MarketHub,
  type MarketMailbox,
  type NotFound,
  OptimizationId,
  Optimizations,
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
  Exit,
  Fiber,
  FiberMap,
  FiberSet,
  Option,
  Schema,
  Scope,
  Stream
} from "effect"
import type { IncomingMessage } from "node:http"
import { presentedToken } from "../http/PresentedToken.js"
import { type StreamLease, StreamLeases } from "./StreamLeases.js"
import { capIncomingMessages, onCloseFrame, type UpgradedSocket, webSocketOf } from "./WebSocketFrames.js"

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
  if (channel === "triggers" || channel === "risk" || channel === "reconciliations" || channel === "decisions") {
    return { kind: "feed", feed: channel } as const
  }
  const prices = /^prices:([A-Za-z0-9]{1,20})$/.exec(channel)
  if (prices) return { kind: "prices", symbol: prices[1]!.toUpperCase() } as const
  const news = /^news:([A-Za-z0-9]{1,20})$/.exec(channel)
  if (news) return { kind: "news", symbol: news[1]!.toUpperCase() } as const
  const decisions = /^decisions:(\d{1,15})$/.exec(channel)
  if (decisions && Schema.is(AccountId)(Number(decisions[1]))) {
    return { kind: "decisions", account: AccountId.make(Number(decisions[1])) } as const
  }
  const backtest = /^backtest:(\d{1,15})$/.exec(channel)
  if (backtest && Schema.is(BacktestId)(Number(backtest[1]))) {
    return { kind: "job", job: "backtest", id: BacktestId.make(Number(backtest[1])) } as const
  }
  const optimization = /^optimization:(\d{1,15})$/.exec(channel)
  if (optimization && Schema.is(OptimizationId)(Number(optimization[1]))) {
    return { kind: "job", job: "optimization", id: OptimizationId.make(Number(optimization[1])) } as const
  }
  return undefined
}

/**
 * `GET /api/ws` (DESIGN §4 "Streams"): a WebSocket carrying subscriptions to `prices:{SYMBOL}`
 * (venue1), `news:{SYMBOL}`, `triggers`, `risk`, `reconciliations`, `decisions`, `decisions:{account}`, `backtest:{id}` and `optimization:{id}`. The token comes in the query (`?session_token=`) or
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
    const optimizations = yield* Optimizations
    const market = yield* MarketData
    const accounts = yield* Accounts
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

    /**
     * One connection after upgrading, until the socket closes; `authenticated` is set when the token
     * came with the request, and `opened` completes once the socket is open. Everything is driven by
     * the socket's and the hub's events: one fiber waits for the socket to close, and another runs
     * only while messages are being handled (in order, one at a time).
     */
    const session = (
      socket: Socket.Socket,
      authenticated: Option.Option<{ readonly caller: CurrentUserShape; readonly lease: StreamLease }>,
      connection: Connection,
      opened: Deferred.Deferred<void>
    ) =>
      Effect.gen(function*() {
        const scope = yield* Effect.scope
        const runFork = yield* FiberSet.makeRuntime<Scope.Scope | HttpServerRequest.HttpServerRequest>()
        const clock = yield* Effect.clock
        const write = yield* socket.writer
        // `ws`'s socket, written to directly; through the platform's writer should `ws` keep it elsewhere.
        let raw: UpgradedSocket | undefined
        const sendText = (text: string) => {
          if (raw === undefined) return Effect.runSync(Effect.ignore(write(text)))
          if (raw.readyState === 1) raw.send(text)
        }
        let held = Option.getOrUndefined(Option.map(authenticated, (a) => a.lease))
        let closed = false
        const close = (code: number, reason: string) => {
          if (closed) return
          closed = true
          if (raw === undefined) Effect.runSync(Effect.ignore(write(new Socket.CloseEvent(code, reason))))
          else raw.close(code, reason)
          // The stream is over for the client: its lease goes now, not after the closing handshake.
          if (held !== undefined) runFork(held.release)
        }
        const send = (message: WsServerMessage) => {
          if (closed) return
          if (raw !== undefined && raw.bufferedAmount > maxBufferedBytes) {
            return close(tryAgainLater, "The client does not read fast enough")
          }
          sendText(JSON.stringify(message))
        }
        const fail = (code: string, error: string, channel: string | null = null) =>
          send({ type: "error", channel, code, error })
        /** An error frame, then the close; nothing more happens on the socket. */
        const refuse = (code: string, error: string, closeCode: number, reason: string) => {
          fail(code, error)
          close(closeCode, reason)
        }
        // A client that sends its close frame is done: its lease goes then, not after the closing handshake.
        let clientClosed = false
        const clientClosing = () => {
          clientClosed = true
          if (held !== undefined) runFork(held.release)
        }

        // Prices, triggers and stories as the hub hands them over; a stream that fell behind is closed.
        // An event that goes to many sockets is encoded once.
        const encoded = new WeakMap<HubUpdate, string>()
        const newsSymbols = new Set<string>()
        let mailbox: MarketMailbox | undefined
        const deliver = () => {
          if (closed || mailbox === undefined) return
          const updates = mailbox.poll()
          if (!Array.isArray(updates)) {
            return (updates as MailboxOverflow | MailboxClosed)._tag === "MailboxOverflow"
              ? close(tryAgainLater, "The client fell behind")
              : close(goingAway, "Server shutting down")
          }
          for (const update of updates as ReadonlyArray<HubUpdate>) {
            if (update.kind === "news") {
              for (const symbol of update.item.symbols) {
                if (newsSymbols.has(symbol)) send({ type: "event", channel: `news:${symbol}`, data: update.item })
              }
              continue
            }
            if (update.kind === "heartbeat") continue
            if (closed) return
            if (raw !== undefined && raw.bufferedAmount > maxBufferedBytes) {
              return close(tryAgainLater, "The client does not read fast enough")
            }
            // A round goes to `decisions` and to its account's `decisions:{id}`, as subscribed.
            if (update.kind === "decision") {
              for (const channel of ["decisions", `decisions:${update.round.account_id}`]) {
                if (subscribed.has(channel)) send({ type: "event", channel, data: update.round })
              }
              continue
            }
            let text = encoded.get(update)
            if (text === undefined) {
              text = JSON.stringify(
                update.kind === "trigger"
                  ? { type: "event", channel: "triggers", data: update.trigger }
                  : update.kind === "risk"
                  ? { type: "event", channel: "risk", data: update.event }
                  : update.kind === "reconciliation"
                  ? { type: "event", channel: "reconciliations", data: update.event }
                  : { type: "event", channel: `prices:${update.symbol}`, data: update }
              )
              encoded.set(update, text)
            }
            sendText(text)
          }
          mailbox.onReady(deliver)
        }

        let caller: CurrentUserShape | undefined
        // The progress of the jobs watched (backtests, optimisations), by channel.
        let jobs: FiberMap.FiberMap<string> | undefined
        const subscribed = new Set<string>()

        const serve = (lease: StreamLease) =>
          Effect.gen(function*() {
            held = lease
            if (clientClosed) yield* lease.release
            // A token revoked meanwhile closes the socket as a refused one would.
            lease.onEnded((reason) => refuse("unauthorized", reason.error, policyViolation, "Session ended"))
            mailbox = yield* hub.mailbox(caller!.id)
            mailbox.onReady(deliver)
          })

        const subscribe = (channel: string) =>
          Effect.gen(function*() {
            const parsed = parseChannel(channel)
            if (parsed === undefined) {
              return fail(
                "invalid_input",
                "channel must be prices:{SYMBOL}, news:{SYMBOL}, triggers, risk, reconciliations, decisions, decisions:{account}, backtest:{id} or optimization:{id}",
                channel
              )
            }
            if (subscribed.has(channel)) return send({ type: "subscribed", channel })
            switch (parsed.kind) {
              case "feed":
                yield* mailbox!.watch(parsed.feed)
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
                  return fail(code, error, channel)
                }
                if (parsed.kind === "prices") yield* mailbox!.watchPrice("venue1", parsed.symbol)
                else {
                  newsSymbols.add(parsed.symbol)
                  yield* mailbox!.watchNews(parsed.symbol)
                }
                break
              }
              case "decisions": {
                const owned = yield* Effect.either(accounts.owned(caller!, parsed.account))
                if (Either.isLeft(owned)) {
                  return fail(owned.left._tag === "Forbidden" ? "forbidden" : "not_found", owned.left.error, channel)
                }
                yield* mailbox!.watch("decisions")
                break
              }
              case "job": {
                const stream = yield* Effect.either<Stream.Stream<unknown, unknown>, Forbidden | NotFound, never>(
                  parsed.job === "backtest"
                    ? progress.watch(caller!, parsed.id)
                    : optimizations.watch(caller!, parsed.id)
                )
                if (Either.isLeft(stream)) {
                  return fail(
                    stream.left._tag === "Forbidden" ? "forbidden" : "not_found",
                    stream.left.error,
                    channel
                  )
                }
                jobs ??= yield* FiberMap.make<string>()
                yield* FiberMap.run(
                  jobs,
                  channel,
                  Stream.runForEach(stream.right, (data) => Effect.sync(() => send({ type: "event", channel, data })))
                )
              }
            }
            subscribed.add(channel)
            send({ type: "subscribed", channel })
          })

        const unsubscribe = (channel: string) =>
          Effect.gen(function*() {
            const parsed = parseChannel(channel)
            subscribed.delete(channel)
            // The decisions feed serves `decisions` and every `decisions:{account}`: it stops with the last of them.
            const deciding = [...subscribed].some((c) => c === "decisions" || c.startsWith("decisions:"))
            if (parsed?.kind === "feed" && (parsed.feed !== "decisions" || !deciding)) {
              yield* mailbox!.unwatch(parsed.feed)
            }
            if (parsed?.kind === "decisions" && !deciding) yield* mailbox!.unwatch("decisions")
            if (parsed?.kind === "prices") yield* mailbox!.unwatchPrice("venue1", parsed.symbol)
            if (parsed?.kind === "news") {
              newsSymbols.delete(parsed.symbol)
              yield* mailbox!.unwatchNews(parsed.symbol)
            }
            if (parsed?.kind === "job" && jobs !== undefined) yield* FiberMap.remove(jobs, channel)
            subscribed.delete(channel)
            send({ type: "unsubscribed", channel })
          })

        /** The token of the first message, checked; each failure closes the socket. */
        const authenticateByMessage = (text: string) =>
          Effect.gen(function*() {
            const message = decodeMessage(text)
            if (Either.isLeft(message) || message.right.type !== "auth") {
              return refuse(
                "unauthorized",
                "The first message must be {\"type\":\"auth\",\"token\":...} when the token is not in the query",
                policyViolation,
                "Authentication required"
              )
            }
            const token = message.right.token
            const user = yield* Effect.either(users.authenticate(token))
            if (closed) return
            if (Either.isLeft(user)) {
              return refuse("unauthorized", user.left.error, policyViolation, "Authentication failed")
            }
            const lease = yield* Effect.either(leases.acquire(token))
            if (Either.isLeft(lease)) {
              return refuse("rate_limited", lease.left.error, policyViolation, "Another stream is open")
            }
            if (closed) {
              return yield* lease.right.release
            }
            yield* Option.match(connection.place, {
              onNone: () => Effect.void,
              onSome: (place) => place.release
            })
            caller = user.right
            yield* serve(lease.right)
          })

        const handle = (text: string) =>
          Effect.suspend(() => {
            if (closed) return Effect.void
            if (caller === undefined) return authenticateByMessage(text)
            const message = decodeMessage(text)
            if (Either.isLeft(message)) {
              return Effect.sync(() =>
                fail("invalid_input", "Messages are JSON: {type: subscribe|unsubscribe, channel} or {type: ping}")
              )
            }
            const m = message.right
            if (m.type === "subscribe") return subscribe(m.channel)
            if (m.type === "unsubscribe") return unsubscribe(m.channel)
            return Effect.sync(() =>
              m.type === "ping" ? send({ type: "pong", channel: null }) : fail("invalid_input", "Already authenticated")
            )
          })

        // Messages waiting while one is handled; one more than it holds closes the socket.
        const inbox: Array<string> = []
        let handling = false
        const drain = (first: string): Effect.Effect<void, never, Scope.Scope | HttpServerRequest.HttpServerRequest> =>
          Effect.flatMap(handle(first), () =>
            Effect.suspend(() => {
              const next = inbox.shift()
              if (next !== undefined) return drain(next)
              handling = false
              return Effect.void
            }))

        // Counted as they arrive, so a flood is cut off however far behind the handling is.
        let count = 0
        let windowStart = 0
        const receive = (data: string | Uint8Array) => {
          if (closed) return
          const now = clock.unsafeCurrentTimeMillis()
          if (now - windowStart >= messageWindow) {
            windowStart = now
            count = 0
          }
          if (++count > messageLimit) {
            return refuse(
              "rate_limited",
              `More than ${messageLimit} messages a minute`,
              policyViolation,
              "Message rate limit exceeded"
            )
          }
          // `ws` refuses a larger frame before reading it (`capIncomingMessages`); this holds should it not.
          const size = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength
          if (size > websocket.maxMessageBytes) return close(messageTooBig, "Message too big")
          const text = typeof data === "string" ? data : new TextDecoder().decode(data)
          if (!handling) {
            handling = true
            // Handled after the messages that came with it are counted, so those wait their turn.
            runFork(Effect.zipRight(Effect.yieldNow(), drain(text)))
          } else if (inbox.length < websocket.maxQueuedMessages) inbox.push(text)
          else {
            refuse(
              "rate_limited",
              `More than ${websocket.maxQueuedMessages} messages are waiting to be handled; wait for the answers`,
              tryAgainLater,
              "Too many messages waiting"
            )
          }
        }

        const start = Effect.gen(function*() {
          raw = webSocketOf(connection.request)
          // The server is stopping: 1001 before the platform's release of the socket closes it without a code.
          yield* hub.onCloseAll(() => close(goingAway, "Server shutting down"))
          if (
            raw === undefined || !capIncomingMessages(connection.request, websocket.maxMessageBytes) ||
            !onCloseFrame(connection.request, clientClosing)
          ) {
            yield* Effect.logWarning("WebSocket messages are not capped before they are read (ws internals changed)")
          }
          if (Option.isSome(authenticated)) {
            caller = authenticated.value.caller
            return yield* serve(authenticated.value.lease)
          }
          if (Option.isSome(connection.place) && !connection.place.value.admitted) {
            return refuse(
              "rate_limited",
              `More than ${websocket.maxUnauthenticatedPerIp} sockets from this address are waiting to authenticate`,
              tryAgainLater,
              "Too many unauthenticated sockets"
            )
          }
          // The time to authenticate runs from the request, however long the upgrade took, and
          // covers the auth message's checks.
          const left = Math.max(
            0,
            Duration.toMillis(websocket.authTimeout) - (clock.unsafeCurrentTimeMillis() - connection.connectedAt)
          )
          runFork(
            Effect.sleep(Duration.millis(left)).pipe(
              Effect.zipRight(Effect.sync(() => {
                if (caller !== undefined) return
                refuse(
                  "unauthorized",
                  `No token within ${Duration.format(websocket.authTimeout)}`,
                  policyViolation,
                  "Authentication timeout"
                )
              }))
            )
          )
        })

        yield* Effect.catchTag(
          socket.runRaw(receive, {
            onOpen: Scope.extend(Effect.ensuring(start, Deferred.succeed(opened, undefined)), scope)
          }),
          "SocketError",
          () => Effect.void
        )
      })

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
        // What the socket holds (its lease, its address's place, its subscriptions) is released when
        // it closes. The request ends once the socket is open, its session going on in a fiber of its
        // own: an open socket does not keep the request's fiber, with its middleware, waiting.
        const scope = yield* Scope.make()
        return yield* Effect.gen(function*() {
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
          const opened = yield* Deferred.make<void>()
          const running = yield* session(socket, authenticated, {
            request: NodeHttpServerRequest.toIncomingMessage(request),
            connectedAt,
            place
          }, opened).pipe(
            Effect.onExit((exit) => Scope.close(scope, exit)),
            Effect.ensuring(Deferred.succeed(opened, undefined)),
            Effect.forkDaemon
          )
          // The platform answers the upgrade once this returns. A client gone before the socket is
          // open (or the server stopping then) interrupts this request, and with it the session.
          yield* Deferred.await(opened).pipe(Effect.onInterrupt(() => Fiber.interrupt(running)))
          return HttpServerResponse.empty()
        }).pipe(
          Scope.extend(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
      })
    )
  })
)
