import { Schema } from "effect"
import { idParam, StoredId } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { documentTrimmed, TrimmedText } from "../http/TrimmedText.js"
import { MarketSymbol } from "../market/Market.js"

export const NewsSourceId = StoredId.pipe(Schema.brand("NewsSourceId"))
export type NewsSourceId = typeof NewsSourceId.Type

export const NewsSourcePath = Schema.Struct({ source_id: idParam(NewsSourceId) })

const FeedUrl = documentTrimmed(
  Schema.Trim.pipe(
    Schema.maxLength(2000),
    Schema.filter((s) => /^https?:\/\/[^\s/]+/i.test(s) && URL.canParse(s), {
      message: () => "must be an http or https URL"
    })
  ),
  { max: 2000, nonEmpty: true, format: "uri", what: "an http or https URL" }
)
const Name = TrimmedText(100)

/** A feed (RSS, Atom, RDF or JSON Feed) the caller reads news from; `last_error` says why its last fetch failed. */
export class NewsSource extends Schema.Class<NewsSource>("NewsSource")({
  id: NewsSourceId,
  name: Schema.String,
  url: Schema.String,
  enabled: Schema.Boolean,
  last_fetched_at: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.String
}) {}

export class NewsSourceList
  extends Schema.Class<NewsSourceList>("NewsSourceList")({ sources: Schema.Array(NewsSource) })
{}

export const NewsSourceCreate = Schema.Struct({
  name: Name,
  url: FeedUrl,
  enabled: Schema.optional(Schema.Boolean)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ name: "My feed", url: "https://example.com/feed.xml" }]
})
export type NewsSourceCreate = typeof NewsSourceCreate.Type

export const NewsSourceUpdate = Schema.Struct({
  name: Schema.optional(Name),
  url: Schema.optional(FeedUrl),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ parseOptions: { errors: "all" }, examples: [{ enabled: true }] })
export type NewsSourceUpdate = typeof NewsSourceUpdate.Type

/** One story, tagged with the symbols it mentions. */
export const NewsItem = Schema.Struct({
  id: Schema.Int,
  title: Schema.String,
  link: Schema.String,
  summary: Schema.NullOr(Schema.String),
  published_at: Schema.NullOr(Schema.String),
  symbols: Schema.Array(Schema.String),
  feed_url: Schema.String
})
export type NewsItem = typeof NewsItem.Type

export class NewsList extends Schema.Class<NewsList>("NewsList")({ items: Schema.Array(NewsItem) }) {}

/** `GET /api/news`: the caller's enabled sources' items, newest first, optionally about one symbol. */
export const NewsParams = Schema.Struct({ symbol: Schema.optional(MarketSymbol), ...Pagination.fields })
export type NewsParams = typeof NewsParams.Type

/** What one fetch of a source found: how many stories were new, or why it failed. */
export class NewsRefresh extends Schema.Class<NewsRefresh>("NewsRefresh")({
  sources: Schema.Array(Schema.Struct({
    id: NewsSourceId,
    url: Schema.String,
    new_items: Schema.Int,
    error: Schema.NullOr(Schema.String)
  }))
}) {}
