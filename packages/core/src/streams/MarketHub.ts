import { Clock, Data, Duration, Effect, FiberHandle, Queue, Schedule, Stream } from "effect"
import { AiTraders } from "../aitraders/AiTraders.js"
import { Reconciliation } from "../automation/Reconciliation.js"
import { RiskFirewall } from "../automation/RiskFirewall.js"
import { News } from "../news/News.js"
import { SignalEngine } from "../signals/SignalEngine.js"
import type { UserId } from "../users/User.js"
import { type Exchange, Venues } from "../venues/Venue.js"
import type {
  DecisionUpdate,
  MarketUpdate,
  NewsUpdate,
  PriceUpdate,
  ReconciliationUpdate,
  RiskUpdate,
  TriggerUpdate
} from "./StreamEvents.js"

/** How often the venues' tickers are read while anyone watches a price. */
export const priceInterval = Duration.seconds(1)
/** A `heartbeat` event this often keeps proxies from closing an idle stream and shows the client the stream is alive. */
export const heartbeatInterval = Duration.seconds(15)
/** Triggers and stories waiting for one slow stream before it is closed (its client resumes with `Last-Event-ID`). */
export const maxPendingEvents = 256

/**
 * What a mailbox hands over: a price or trigger update, a story about a watched symbol, or (to a
 * mailbox that asked for them) a heartbeat. One object per event is handed to every mailbox it goes to.
 */
export type HubUpdate =
  | MarketUpdate
  | { readonly kind: "news"; readonly item: NewsUpdate }
  | { readonly kind: "heartbeat"; readonly timestamp: string }

/** A stream fell too far behind on triggers; it ends so its client reconnects and replays. */
export class MailboxOverflow extends Data.TaggedError("MailboxOverflow") {}
/** The hub is stopping (the server shuts down): every stream ends. */
export class MailboxClosed extends Data.TaggedError("MailboxClosed") {}

const priceKey = (exchange: Exchange, symbol: string) => `${exchange}:${symbol}`

type Queued =
  | TriggerUpdate
  | RiskUpdate
  | ReconciliationUpdate
  | DecisionUpdate
  | { readonly kind: "news"; readonly item: NewsUpdate }

/**
 * What a stream may follow of its user's own: signal triggers, accounts' risk mode changes,
 * reconciliation events, AI accounts' decision rounds.
 */
export type UserFeed = "triggers" | "risk" | "reconciliations" | "decisions"

/**
 * What one open stream has not sent yet. Bounded whatever the consumer's speed: prices are
 * coalesced (the latest per symbol), triggers and stories are queued up to `maxPendingEvents`,
 * past which the mailbox overflows. Its consumer is called back when something arrives, so a
 * stream waiting for events holds no fiber.
 */
export class Mailbox {
  /** The last price this stream has seen or been sent, per watched symbol. */
  readonly known = new Map<string, number>()
  private readonly prices = new Map<string, PriceUpdate>()
  private queued: Array<Queued> = []
  private heartbeat: HubUpdate | undefined = undefined
  private overflowed = false
  private closed = false
  private ready: (() => void) | undefined = undefined
  constructor(readonly userId: UserId) {}

  offerPrice(key: string, update: PriceUpdate) {
    if (this.known.get(key) === update.price) return
    this.known.set(key, update.price)
    this.prices.set(key, update)
    this.wake()
  }

  /** A trigger, a story or an account's event: queued in order. */
  offer(update: Queued) {
    this.enqueue(update)
  }

  offerHeartbeat(update: HubUpdate) {
    this.heartbeat = update
    this.wake()
  }

  private enqueue(update: Queued) {
    if (this.queued.length >= maxPendingEvents) this.overflowed = true
    else this.queued.push(update)
    this.wake()
  }

  close() {
    this.closed = true
    this.wake()
  }

  private wake() {
    const ready = this.ready
    this.ready = undefined
    ready?.()
  }

  /** Calls `f` once, as soon as `poll` has something (at once if it has already). */
  onReady(f: () => void) {
    if (this.closed || this.overflowed || this.prices.size > 0 || this.queued.length > 0 || this.heartbeat) f()
    else this.ready = f
  }

  /** Hands over all that is pending: triggers and stories first, in order, then prices and the heartbeat. */
  poll(): ReadonlyArray<HubUpdate> | MailboxOverflow | MailboxClosed {
    if (this.closed) return new MailboxClosed()
    if (this.overflowed) return new MailboxOverflow()
    const out: Array<HubUpdate> = this.queued
    for (const update of this.prices.values()) out.push(update)
    if (this.heartbeat) out.push(this.heartbeat)
    this.queued = []
    this.prices.clear()
    this.heartbeat = undefined
    return out
  }

  /** Waits until something is pending, then hands over all of it (as `poll`). */
  readonly take: Effect.Effect<ReadonlyArray<HubUpdate>, MailboxOverflow | MailboxClosed> = Effect.async((resume) => {
    this.onReady(() => {
      const out = this.poll()
      resume(Array.isArray(out) ? Effect.succeed(out) : Effect.fail(out as MailboxOverflow | MailboxClosed))
    })
    return Effect.sync(() => {
      this.ready = undefined
    })
  })
}

/**
 * The fan-out behind every live stream of this process. One fiber takes the signal engine's
 * trigger events and hands each to the mailboxes of its user; one takes newly stored news stories
 * and hands each to the mailboxes watching a symbol it mentions whose user reads its feed; one,
 * running only while some stream watches a price, reads the venues' tickers every `priceInterval`
 * and hands each moved price to the mailboxes watching it. A publisher never waits for a consumer.
 */
export class MarketHub extends Effect.Service<MarketHub>()("@trading-platform/core/MarketHub", {
  scoped: Effect.gen(function*() {
    const venues = yield* Venues
    const engine = yield* SignalEngine
    const news = yield* News
    const risk = yield* RiskFirewall
    const reconciliation = yield* Reconciliation
    const aiTraders = yield* AiTraders
    const open = new Set<Mailbox>()
    const closers = new Set<() => void>()
    const priceWatchers = new Map<string, { exchange: Exchange; symbol: string; mailboxes: Set<Mailbox> }>()
    const newsWatchers = new Map<string, Set<Mailbox>>()
    const userWatchers: Record<UserFeed, Map<UserId, Set<Mailbox>>> = {
      triggers: new Map(),
      risk: new Map(),
      reconciliations: new Map(),
      decisions: new Map()
    }
    const deliver = (feed: UserFeed, userId: UserId, update: Queued) => {
      for (const mailbox of userWatchers[feed].get(userId) ?? []) mailbox.offer(update)
    }
    const triggers = yield* engine.subscribe
    yield* Queue.take(triggers).pipe(
      Effect.map((trigger) => deliver("triggers", trigger.user_id, { kind: "trigger", trigger })),
      Effect.forever,
      Effect.forkScoped
    )
    // Accounts' mode changes and reconciliation events, from every instance (a notification at commit): to the owner's mailboxes.
    const relay = <A>(what: string, changes: Stream.Stream<A, unknown>, f: (a: A) => void) =>
      changes.pipe(
        Stream.runForEach((a) => Effect.sync(() => f(a))),
        Effect.catchAllCause((cause) => Effect.logWarning(`${what} stopped; listening again`, cause)),
        Effect.repeat(Schedule.spaced("5 seconds")),
        Effect.forkScoped
      )
    yield* relay("Risk events", risk.changes, ({ event, user_id }) => deliver("risk", user_id, { kind: "risk", event }))
    yield* relay(
      "Reconciliation events",
      reconciliation.changes,
      ({ event, user_id }) => deliver("reconciliations", user_id, { kind: "reconciliation", event })
    )
    yield* relay(
      "AI decision rounds",
      aiTraders.changes,
      ({ round, user_id }) => deliver("decisions", user_id, { kind: "decision", round })
    )
    const stories = yield* news.subscribe
    yield* Queue.take(stories).pipe(
      Effect.map(({ item, readers }) => {
        // Once per mailbox, however many of its symbols the story mentions.
        const boxes = new Set<Mailbox>()
        for (const symbol of item.symbols) {
          for (const box of newsWatchers.get(symbol) ?? []) if (readers.has(box.userId)) boxes.add(box)
        }
        const update = { kind: "news", item } as const
        for (const box of boxes) box.offer(update)
      }),
      Effect.forever,
      Effect.forkScoped
    )

    const pollPrices = Effect.gen(function*() {
      const exchanges = new Set(Array.from(priceWatchers.values(), (w) => w.exchange))
      const timestamp = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* Effect.forEach(exchanges, (exchange) =>
        venues[exchange].tickers.pipe(
          Effect.map((tickers) => {
            for (const [key, watch] of priceWatchers) {
              const ticker = watch.exchange === exchange ? tickers.get(watch.symbol) : undefined
              if (!ticker) continue
              const update: PriceUpdate = {
                kind: "price",
                exchange,
                symbol: ticker.symbol,
                price: ticker.price,
                change_24h: ticker.change_24h,
                volume_24h: ticker.volume_24h,
                funding_rate: ticker.funding_rate,
                timestamp
              }
              for (const mailbox of watch.mailboxes) mailbox.offerPrice(key, update)
            }
          }),
          // A venue outage pauses price updates; the next round tries again.
          Effect.catchAll((e) => Effect.logWarning(`price poll of ${exchange} failed`, e))
        ), { discard: true })
    })
    const poller = yield* FiberHandle.make()
    const pollerLoop = Effect.repeat(pollPrices, Schedule.spaced(priceInterval)).pipe(Effect.delay(priceInterval))

    // Heartbeats: each stream's every `heartbeatInterval` from its opening, by one fiber for all of
    // them. Every stream waits the same interval, so the queue in order of arrival is in order of due time.
    let beats: Array<{ readonly box: Mailbox; due: number }> = []
    let beatsHead = 0
    const beatsWaiting = yield* Effect.makeLatch(false)
    yield* Effect.gen(function*() {
      const interval = Duration.toMillis(heartbeatInterval)
      for (;;) {
        const next = beats[beatsHead]
        if (next === undefined) {
          beats = []
          beatsHead = 0
          yield* beatsWaiting.close
          if (beats.length === 0) yield* beatsWaiting.await
          continue
        }
        const now = yield* Clock.currentTimeMillis
        if (next.due > now) {
          yield* Effect.sleep(next.due - now)
          continue
        }
        const update = { kind: "heartbeat", timestamp: new Date(now).toISOString() } as const
        while (beatsHead < beats.length && beats[beatsHead]!.due <= now) {
          const beat = beats[beatsHead]!
          beats[beatsHead++] = undefined!
          if (!open.has(beat.box)) continue
          beat.box.offerHeartbeat(update)
          beat.due += interval
          beats.push(beat)
        }
        // Drops the slots already passed once they are most of the queue.
        if (beatsHead > 1024 && beatsHead * 2 > beats.length) {
          beats = beats.slice(beatsHead)
          beatsHead = 0
        }
      }
    }).pipe(Effect.forkScoped)

    /**
     * A mailbox for one stream of `userId`, unregistered from everything when the scope closes;
     * with `heartbeats`, it is handed a heartbeat every `heartbeatInterval`.
     */
    const mailbox = (userId: UserId, options?: { readonly heartbeats?: boolean }) =>
      Effect.gen(function*() {
        const box = new Mailbox(userId)
        open.add(box)
        if (options?.heartbeats) {
          beats.push({ box, due: (yield* Clock.currentTimeMillis) + Duration.toMillis(heartbeatInterval) })
          yield* beatsWaiting.open
        }
        const watchedPrices = new Set<string>()

        const watchPrice = (exchange: Exchange, symbol: string, baseline?: number) =>
          Effect.gen(function*() {
            const key = priceKey(exchange, symbol)
            if (baseline !== undefined) box.known.set(key, baseline)
            const watch = priceWatchers.get(key) ?? { exchange, symbol, mailboxes: new Set() }
            priceWatchers.set(key, watch)
            watch.mailboxes.add(box)
            watchedPrices.add(key)
            yield* FiberHandle.run(poller, pollerLoop, { onlyIfMissing: true })
          })
        const unwatchPrice = (exchange: Exchange, symbol: string) =>
          Effect.gen(function*() {
            const key = priceKey(exchange, symbol)
            const watch = priceWatchers.get(key)
            watch?.mailboxes.delete(box)
            if (watch?.mailboxes.size === 0) priceWatchers.delete(key)
            watchedPrices.delete(key)
            box.known.delete(key)
            if (priceWatchers.size === 0) yield* FiberHandle.clear(poller)
          })
        const watchedFeeds = new Set<UserFeed>()
        /** The user's own events of `feed`. */
        const watch = (feed: UserFeed) =>
          Effect.sync(() => {
            const set = userWatchers[feed].get(userId) ?? new Set()
            userWatchers[feed].set(userId, set)
            set.add(box)
            watchedFeeds.add(feed)
          })
        const unwatch = (feed: UserFeed) =>
          Effect.sync(() => {
            const set = userWatchers[feed].get(userId)
            set?.delete(box)
            if (set?.size === 0) userWatchers[feed].delete(userId)
            watchedFeeds.delete(feed)
          })
        const watchedNews = new Set<string>()
        /** Stories mentioning `symbol` from feeds the user has enabled. */
        const watchNews = (symbol: string) =>
          Effect.sync(() => {
            const set = newsWatchers.get(symbol) ?? new Set()
            newsWatchers.set(symbol, set)
            set.add(box)
            watchedNews.add(symbol)
          })
        const unwatchNews = (symbol: string) =>
          Effect.sync(() => {
            const set = newsWatchers.get(symbol)
            set?.delete(box)
            if (set?.size === 0) newsWatchers.delete(symbol)
            watchedNews.delete(symbol)
          })
        yield* Effect.addFinalizer(() =>
          Effect.zipRight(
            Effect.sync(() => open.delete(box)),
            Effect.zipRight(
              Effect.forEach(Array.from(watchedFeeds), unwatch, { discard: true }),
              Effect.zipRight(
                Effect.forEach(Array.from(watchedNews), unwatchNews, { discard: true }),
                Effect.forEach(Array.from(watchedPrices), (key) => {
                  const watch = priceWatchers.get(key)!
                  return unwatchPrice(watch.exchange, watch.symbol)
                }, { discard: true })
              )
            )
          )
        )
        return {
          take: box.take,
          poll: () => box.poll(),
          onReady: (f: () => void) => box.onReady(f),
          watchPrice,
          unwatchPrice,
          watch,
          unwatch,
          watchNews,
          unwatchNews
        } as const
      })

    /** Open mailboxes and watched symbols, for tests and metrics. */
    const size = Effect.sync(() => ({
      triggerWatchers: Array.from(userWatchers.triggers.values()).reduce((n, s) => n + s.size, 0),
      priceWatchers: Array.from(priceWatchers.values()).reduce((n, w) => n + w.mailboxes.size, 0),
      newsWatchers: Array.from(newsWatchers.values()).reduce((n, s) => n + s.size, 0)
    }))

    /**
     * Ends every open stream. A host calls it before closing its HTTP server, which waits for
     * open responses; it also runs when the hub itself stops.
     */
    const closeAll = Effect.sync(() => {
      for (const box of open) box.close()
      for (const f of Array.from(closers)) f()
    })
    yield* Effect.addFinalizer(() => closeAll)

    /**
     * Calls `f` when every stream is ended (`closeAll`), until the scope closes: for a stream that
     * may have no mailbox (a WebSocket that has not authenticated yet).
     */
    const onCloseAll = (f: () => void) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          closers.add(f)
        }),
        () =>
          Effect.sync(() => {
            closers.delete(f)
          })
      )

    return { mailbox, closeAll, onCloseAll, size } as const
  })
}) {}

export type MarketMailbox = Effect.Effect.Success<ReturnType<MarketHub["mailbox"]>>
