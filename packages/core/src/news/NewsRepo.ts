import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { NewsItem, NewsSourceId } from "./NewsSource.js"

export const NewsSourceRow = Schema.Struct({
  id: NewsSourceId,
  user_id: UserId,
  name: Schema.String,
  url: Schema.String,
  enabled: Schema.Boolean,
  last_fetched_at: Schema.NullOr(IsoTimestamp),
  last_error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp
})
export type NewsSourceRow = typeof NewsSourceRow.Type

const ItemRow = Schema.Struct({
  ...NewsItem.fields,
  published_at: Schema.NullOr(IsoTimestamp),
  symbols: Schema.parseJson(Schema.Array(Schema.String))
})

export interface FeedItem {
  readonly link: string
  readonly title: string
  readonly summary: string | null
  readonly published_at: Date | null
  readonly symbols: ReadonlyArray<string>
}

/** SQL for news sources and items; no rules here. */
export class NewsRepo extends Effect.Service<NewsRepo>()("@trading-platform/core/NewsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Gives a user the default sources once (a user who deletes them does not get them back). */
    const seed = (
      user_id: UserId,
      defaults: ReadonlyArray<{ readonly name: string; readonly url: string }>,
      now: Date
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const marked =
          yield* sql`INSERT INTO news_seeded (user_id) VALUES (${user_id}) ON CONFLICT DO NOTHING RETURNING user_id`
        if (marked.length === 0 || defaults.length === 0) return
        yield* sql`INSERT INTO news_sources ${
          sql.insert(defaults.map((d) => ({ ...d, user_id, enabled: false, created_at: now, updated_at: now })))
        }`
      }))
    const listByUser = SqlSchema.findAll({
      Request: UserId,
      Result: NewsSourceRow,
      execute: (user_id) => sql`SELECT * FROM news_sources WHERE user_id = ${user_id} ORDER BY id`
    })
    const findById = SqlSchema.findOne({
      Request: NewsSourceId,
      Result: NewsSourceRow,
      execute: (id) => sql`SELECT * FROM news_sources WHERE id = ${id}`
    })
    const insert = SqlSchema.single({
      Request: Schema.Struct({
        user_id: UserId,
        name: Schema.String,
        url: Schema.String,
        enabled: Schema.Boolean,
        now: Schema.DateFromSelf
      }),
      Result: NewsSourceRow,
      execute: ({ now, ...s }) =>
        sql`INSERT INTO news_sources ${sql.insert({ ...s, created_at: now, updated_at: now })} RETURNING *`
    })
    const update = SqlSchema.single({
      Request: Schema.Struct({
        id: NewsSourceId,
        name: Schema.String,
        url: Schema.String,
        enabled: Schema.Boolean,
        now: Schema.DateFromSelf
      }),
      Result: NewsSourceRow,
      execute: ({ id, now, ...s }) =>
        sql`UPDATE news_sources SET ${sql.update({ ...s, updated_at: now })} WHERE id = ${id} RETURNING *`
    })
    const remove = (id: NewsSourceId) => sql`DELETE FROM news_sources WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Every feed URL some user has enabled. */
    const enabledUrls = sql<{ url: string }>`SELECT DISTINCT url FROM news_sources WHERE enabled`.pipe(
      Effect.map((rows) => rows.map((r) => r.url))
    )
    /** Stores a feed's new items (a link the feed already brought is skipped); answers how many were new. */
    const storeItems = (feed_url: string, items: ReadonlyArray<FeedItem>, now: Date) =>
      items.length === 0 ? Effect.succeed(0) : sql`
        INSERT INTO news_items ${
        sql.insert(items.map((i) => ({ ...i, symbols: JSON.stringify(i.symbols), feed_url, fetched_at: now })))
      }
        ON CONFLICT (feed_url, link) DO NOTHING RETURNING id`.pipe(Effect.map((rows) => rows.length))
    const recordFetch = (url: string, error: string | null, now: Date) =>
      sql`UPDATE news_sources SET last_fetched_at = ${now}, last_error = ${error} WHERE url = ${url} AND enabled`.pipe(
        Effect.asVoid
      )

    const items = SqlSchema.findAll({
      Request: Schema.Struct({
        user_id: UserId,
        symbol: Schema.NullOr(Schema.String),
        limit: Schema.Int,
        offset: Schema.Int
      }),
      Result: ItemRow,
      // A story several of the user's feeds brought is listed once, as the first stored.
      execute: (q) =>
        sql`
        SELECT id, title, link, summary, published_at, symbols, feed_url FROM (
          SELECT DISTINCT ON (i.link) i.* FROM news_items i
          WHERE i.feed_url IN (SELECT url FROM news_sources WHERE user_id = ${q.user_id} AND enabled)
          ${q.symbol === null ? sql`` : sql`AND i.symbols LIKE ${`%"${q.symbol}"%`}`}
          ORDER BY i.link, i.id
        ) i
        ORDER BY COALESCE(published_at, fetched_at) DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** The id of the latest stored item (0 when none). */
    const lastItemId = sql<{ id: number }>`SELECT COALESCE(max(id), 0) AS id FROM news_items`.pipe(
      Effect.map((rows) => rows[0]?.id ?? 0)
    )
    /** Items stored after the item `after`, oldest first. */
    const itemsAfter = SqlSchema.findAll({
      Request: Schema.Struct({ after: Schema.Int, limit: Schema.Int }),
      Result: ItemRow,
      execute: (q) =>
        sql`
        SELECT id, title, link, summary, published_at, symbols, feed_url FROM news_items
        WHERE id > ${q.after} ORDER BY id LIMIT ${q.limit}`
    })
    /** Who has each of `urls` enabled. */
    const readersOf = (urls: ReadonlyArray<string>) =>
      urls.length === 0
        ? Effect.succeed([])
        : sql<{ user_id: UserId; url: string }>`
          SELECT DISTINCT user_id, url FROM news_sources WHERE enabled AND ${sql.in("url", urls)}`

    /** The readers of each of `ids` who had the same story (by link) from another enabled feed, stored before it. */
    const readBefore = (ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? Effect.succeed([])
        : sql<{ item_id: number; user_id: UserId }>`
          SELECT DISTINCT i.id AS item_id, s.user_id FROM news_items i
          JOIN news_items e ON e.link = i.link AND e.id < i.id
          JOIN news_sources s ON s.url = e.feed_url AND s.enabled
          WHERE ${sql.in("i.id", ids)}`

    return {
      seed,
      listByUser,
      findById,
      insert,
      update,
      remove,
      enabledUrls,
      storeItems,
      recordFetch,
      items,
      lastItemId,
      itemsAfter,
      readersOf,
      readBefore
    } as const
  })
}) {}
