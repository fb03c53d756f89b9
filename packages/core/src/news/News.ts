import { HttpClient } from "@effect/platform"
import { Clock, Effect } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { pageOf } from "../http/Pagination.js"
import { leasedLoop } from "../jobs/Leases.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import type { UserId } from "../users/User.js"
import { Venues } from "../venues/Venue.js"
import { readFeed } from "./FeedReader.js"
import { NewsRepo, type NewsSourceRow } from "./NewsRepo.js"
import {
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
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** News: the caller's feeds, fetching them (stories de-duplicated by link, tagged with symbols), and reading them. */
export class News extends Effect.Service<News>()("@trading-platform/core/News", {
  effect: Effect.gen(function*() {
    const repo = yield* NewsRepo
    const venues = yield* Venues
    const http = yield* HttpClient.HttpClient
    const { news: options } = yield* PlatformConfig

    const seeded = (caller: CurrentUserShape) =>
      Effect.flatMap(now, (at) => repo.seed(caller.id, defaultNewsSources, at))
    const owned = (caller: CurrentUserShape, id: NewsSourceId) =>
      repo.findById(id).pipe(ownedBy(caller, `News source ${id}`), dieOnStorageFailure)

    /** Fetches one feed and stores its new stories; answers how many were new, or why it failed. */
    const fetchFeed = (url: string) =>
      Effect.gen(function*() {
        const listed = new Set((yield* venues.venue1.tickers.pipe(Effect.orElseSucceed(() => new Map()))).keys())
        const at = yield* now
        const read = yield* Effect.either(
          readFeed(url, options.timeout, listed).pipe(Effect.provideService(HttpClient.HttpClient, http))
        )
        if (read._tag === "Left") {
          yield* repo.recordFetch(url, `The feed ${read.left}`, at)
          return { new_items: 0, error: `The feed ${read.left}` }
        }
        const added = yield* repo.storeItems(url, read.right, at)
        yield* repo.recordFetch(url, null, at)
        return { new_items: added, error: null }
      }).pipe(Effect.withSpan("News.fetchFeed", { attributes: { url } }))

    const sources = (caller: CurrentUserShape) =>
      seeded(caller).pipe(
        Effect.zipRight(repo.listByUser(caller.id)),
        Effect.map((rows) => new NewsSourceList({ sources: rows.map(toSource) })),
        dieOnStorageFailure,
        Effect.withSpan("News.sources", { attributes: { userId: caller.id } })
      )

    const create = (caller: CurrentUserShape, input: NewsSourceCreate) =>
      Effect.gen(function*() {
        yield* seeded(caller)
        return toSource(
          yield* repo.insert({ user_id: caller.id, ...input, enabled: input.enabled ?? true, now: yield* now })
        )
      }).pipe(dieOnStorageFailure, Effect.withSpan("News.create", { attributes: { userId: caller.id } }))

    const update = (caller: CurrentUserShape, id: NewsSourceId, input: NewsSourceUpdate) =>
      Effect.gen(function*() {
        const current = yield* owned(caller, id)
        return toSource(
          yield* repo.update({
            id,
            name: input.name ?? current.name,
            url: input.url ?? current.url,
            enabled: input.enabled ?? current.enabled,
            now: yield* now
          })
        )
      }).pipe(dieOnStorageFailure, Effect.withSpan("News.update", { attributes: { userId: caller.id, sourceId: id } }))

    const remove = (caller: CurrentUserShape, id: NewsSourceId) =>
      owned(caller, id).pipe(
        Effect.zipRight(repo.remove(id)),
        dieOnStorageFailure,
        Effect.withSpan("News.remove", { attributes: { sourceId: id } })
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
      }).pipe(dieOnStorageFailure, Effect.withSpan("News.refresh", { attributes: { userId: caller.id } }))

    const list = (caller: CurrentUserShape, params: NewsParams) =>
      repo.items({ user_id: caller.id, symbol: params.symbol ?? null, ...pageOf(params) }).pipe(
        Effect.map((items) => new NewsList({ items })),
        dieOnStorageFailure,
        Effect.withSpan("News.list", { attributes: { userId: caller.id } })
      )

    /** The latest stories about `symbol` from a user's enabled sources (for work done on their behalf, e.g. insights). */
    const about = (user_id: UserId, symbol: string, limit: number) =>
      repo.items({ user_id, symbol, limit, offset: 0 }).pipe(dieOnStorageFailure)

    /** Every enabled feed, once each: what the background fetcher runs. */
    const fetchAll = repo.enabledUrls.pipe(
      Effect.flatMap((urls) => Effect.forEach(urls, fetchFeed, { concurrency: 4, discard: true })),
      dieOnStorageFailure
    )

    return { sources, create, update, remove, refresh, list, about, fetchAll } as const
  })
}) {}

/**
 * The background fetcher: at start and every `NEWS_FETCH_INTERVAL_S` the instance that holds the
 * `news-fetcher` lease (so one replica fetches) reads every enabled feed. Driven by the Clock, and
 * stopped with the layer's scope.
 */
export const NewsFetcherLive = Effect.gen(function*() {
  const news = yield* News
  const { news: options } = yield* PlatformConfig
  // The lease outlives two intervals: a holder that died is replaced after missing one round.
  yield* leasedLoop("news-fetcher", { interval: options.fetchInterval, lease: options.fetchInterval }, news.fetchAll)
})
