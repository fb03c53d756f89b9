import { Clock, Effect, PubSub, type Queue, type Scope } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { GuardedFetch } from "../fetch/GuardedFetch.js"
import { summarizeIssues } from "../http/DecodeFailure.js"
import { InvalidInput } from "../http/Errors.js"
import { pageOf } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { leasedLoop } from "../jobs/Leases.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import type { UserId } from "../users/User.js"
import { Venues } from "../venues/Venue.js"
import { readFeed } from "./FeedReader.js"
import { NewsRepo, type NewsSourceRow } from "./NewsRepo.js"
import {
  type NewsItem,
  NewsList,
  type NewsParams,
  NewsRefresh,
  NewsSource,
  type NewsSourceCreate,
  type NewsSourceId,
  NewsSourceList,
  type NewsSourceUpdate
} from "./NewsSource.js"

/** Public crypto news feeds every user starts with, disabled: the server may have no internet. */
export const defaultNewsSources = [
  { name: "CoinDesk", url: "https://www.coindesk.com/arc/outboundfeeds/rss/" },
  { name: "Cointelegraph", url: "https://cointelegraph.com/rss" },
  { name: "Decrypt", url: "https://decrypt.co/feed" }
] as const

const toSource = ({ user_id: _, ...row }: NewsSourceRow) => new NewsSource(row)

/** A newly stored story, and the users who read it (those with its feed enabled). */
export interface StoredNews {
  readonly item: NewsItem
  readonly readers: ReadonlySet<UserId>
}
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * News: the caller's feeds, fetching them (each feed's stories de-duplicated by link, tagged with
 * symbols), and reading them; newly stored stories are also published to this process's
 * subscribers (the live streams).
 */ export class News extends Effect.Service<News>()("@trading-platform/core/News", {
  scoped: Effect.gen(function*() {
    const repo = yield* NewsRepo
    const venues = yield* Venues
    const fetcher = yield* GuardedFetch
    const { news: options } = yield* PlatformConfig
    const stored = yield* Effect.acquireRelease(PubSub.unbounded<StoredNews>(), PubSub.shutdown)
    // Stories are published from the table, after the latest stored when this process started, so
    // every process publishes those any process stored. One store or publish at a time here, so
    // this process never passes over an id it has not seen committed.
    let published = yield* dieOnStorageFailure(repo.lastItemId)
    const lock = yield* Effect.makeSemaphore(1)

    const publishNewUnlocked = Effect.gen(function*() {
      for (;;) {
        const items = yield* repo.itemsAfter({ after: published, limit: 100 })
        if (items.length === 0) return
        const readers = yield* repo.readersOf([...new Set(items.map((i) => i.feed_url))])
        // A story another feed of theirs brought earlier is not news to a reader.
        const seen = yield* repo.readBefore(items.map((i) => i.id))
        for (const item of items) {
          const users = new Set(
            readers.filter((r) => r.url === item.feed_url).map((r) => r.user_id).filter((user) =>
              !seen.some((s) => s.item_id === item.id && s.user_id === user)
            )
          )
          if (item.symbols.length > 0 && users.size > 0) yield* PubSub.publish(stored, { item, readers: users })
        }
        published = items[items.length - 1]!.id
      }
    })
    /** Publishes the stories stored (by any process) since this process last looked. */
    const publishNew = lock.withPermits(1)(publishNewUnlocked).pipe(dieOnStorageFailure)

    const seeded = (caller: CurrentUserShape) =>
      Effect.flatMap(now, (at) => repo.seed(caller.id, defaultNewsSources, at))
    const owned = (caller: CurrentUserShape, id: NewsSourceId) =>
      repo.findById(id).pipe(ownedBy(caller, `News source ${id}`), dieOnStorageFailure)
    // The fetch refuses every internal address; one written as an IP address is refused at the door too.
    const checkUrl = (url: string | undefined) => {
      const kind = url === undefined ? null : fetcher.literalRefusal(url)
      if (kind === null) return Effect.void
      const issues = [{ path: "url", message: `must not be a ${kind} address` }]
      return Effect.fail(new InvalidInput({ error: `Invalid request: ${summarizeIssues(issues)}`, issues }))
    }

    /** Fetches one feed and stores its new stories; answers how many were new, or why it failed. */
    const fetchFeed = (url: string) =>
      Effect.gen(function*() {
        const listed = new Set((yield* venues.venue1.tickers.pipe(Effect.orElseSucceed(() => new Map()))).keys())
        const at = yield* now
        const read = yield* Effect.either(
          readFeed(url, options, listed).pipe(Effect.provideService(GuardedFetch, fetcher))
        )
        if (read._tag === "Left") {
          yield* repo.recordFetch(url, `The feed ${read.left}`, at)
          return { new_items: 0, error: `The feed ${read.left}` }
        }
        const added = yield* lock.withPermits(1)(
          Effect.tap(repo.storeItems(url, read.right, at), (n) => (n > 0 ? publishNewUnlocked : Effect.void))
        )
        yield* repo.recordFetch(url, null, at)
        return { new_items: added, error: null }
      }).pipe(withRequestSpan("News.fetchFeed", { attributes: { url } }))

    const sources = (caller: CurrentUserShape) =>
      seeded(caller).pipe(
        Effect.zipRight(repo.listByUser(caller.id)),
        Effect.map((rows) => new NewsSourceList({ sources: rows.map(toSource) })),
        dieOnStorageFailure,
        withRequestSpan("News.sources", { attributes: { userId: caller.id } })
      )

    const create = (caller: CurrentUserShape, input: NewsSourceCreate) =>
      Effect.gen(function*() {
        yield* checkUrl(input.url)
        yield* seeded(caller)
        return toSource(
          yield* repo.insert({ user_id: caller.id, ...input, enabled: input.enabled ?? true, now: yield* now })
        )
      }).pipe(dieOnStorageFailure, withRequestSpan("News.create", { attributes: { userId: caller.id } }))

    const update = (caller: CurrentUserShape, id: NewsSourceId, input: NewsSourceUpdate) =>
      Effect.gen(function*() {
        const current = yield* owned(caller, id)
        yield* checkUrl(input.url)
        return toSource(
          yield* repo.update({
            id,
            name: input.name ?? current.name,
            url: input.url ?? current.url,
            enabled: input.enabled ?? current.enabled,
            now: yield* now
          })
        )
      }).pipe(dieOnStorageFailure, withRequestSpan("News.update", { attributes: { userId: caller.id, sourceId: id } }))

    const remove = (caller: CurrentUserShape, id: NewsSourceId) =>
      owned(caller, id).pipe(
        Effect.zipRight(repo.remove(id)),
        dieOnStorageFailure,
        withRequestSpan("News.remove", { attributes: { sourceId: id } })
      )

    /** Fetches the caller's enabled sources now. */
    const refresh = (caller: CurrentUserShape) =>
      Effect.gen(function*() {
        const enabled = (yield* repo.listByUser(caller.id)).filter((s) => s.enabled)
        const results = yield* Effect.forEach(enabled, (s) =>
          Effect.map(fetchFeed(s.url), (r) => ({ id: s.id, url: s.url, ...r })), {
          concurrency: 4
        })
        return new NewsRefresh({ sources: results })
      }).pipe(dieOnStorageFailure, withRequestSpan("News.refresh", { attributes: { userId: caller.id } }))

    const list = (caller: CurrentUserShape, params: NewsParams) =>
      repo.items({ user_id: caller.id, symbol: params.symbol ?? null, ...pageOf(params) }).pipe(
        Effect.map((items) => new NewsList({ items })),
        dieOnStorageFailure,
        withRequestSpan("News.list", { attributes: { userId: caller.id } })
      )

    /** The latest stories about `symbol` from a user's enabled sources (for work done on their behalf, e.g. insights). */
    const about = (user_id: UserId, symbol: string, limit: number) =>
      repo.items({ user_id, symbol, limit, offset: 0 }).pipe(dieOnStorageFailure)

    /** Every enabled feed, once each: what the background fetcher runs. */
    const fetchAll = repo.enabledUrls.pipe(
      Effect.flatMap((urls) => Effect.forEach(urls, fetchFeed, { concurrency: 4, discard: true })),
      dieOnStorageFailure
    )

    /** Stories as they are stored, with their readers, for as long as the scope lives. */
    const subscribe: Effect.Effect<Queue.Dequeue<StoredNews>, never, Scope.Scope> = PubSub.subscribe(stored)

    return { sources, create, update, remove, refresh, list, about, fetchAll, publishNew, subscribe } as const
  })
}) {}

/**
 * The background fetcher: at start and every `NEWS_FETCH_INTERVAL_S` the instance that holds the
 * `news-fetcher` lease (so one replica fetches) reads every enabled feed, and every instance
 * publishes the stories stored since its last round (those another replica fetched). Driven by the
 * Clock, and stopped with the layer's scope.
 */
export const NewsFetcherLive = Effect.gen(function*() {
  const news = yield* News
  const { news: options } = yield* PlatformConfig
  // The lease outlives two intervals: a holder that died is replaced after missing one round.
  yield* leasedLoop("news-fetcher", { interval: options.fetchInterval, lease: options.fetchInterval }, news.fetchAll)
  const publish = news.publishNew.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("publishing stored news failed", cause))
  )
  yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(options.fetchInterval), publish)))
})
