import { type Duration, Effect } from "effect"
import { fetchFailedText, GuardedFetch } from "../fetch/GuardedFetch.js"
import type { FeedItem } from "./NewsRepo.js"

// Common names of the coins the simulated and real venues list.
const names: Record<string, string> = {
  bitcoin: "BTC",
  ethereum: "ETH",
  ether: "ETH",
  solana: "SOL",
  ripple: "XRP",
  dogecoin: "DOGE",
  cardano: "ADA",
  avalanche: "AVAX",
  chainlink: "LINK",
  litecoin: "LTC"
}

/** The listed symbols a story mentions: the ticker in capitals (`BTC`, `$ETH`) or the coin's name. */
export const symbolsIn = (text: string, listed: ReadonlySet<string>): Array<string> => {
  const found = new Set<string>()
  for (const [, word] of text.matchAll(/\$?\b([A-Z][A-Z0-9]{1,9})\b/g)) if (listed.has(word!)) found.add(word!)
  for (const [, word] of text.toLowerCase().matchAll(/\b([a-z]+)\b/g)) {
    const symbol = names[word!]
    if (symbol && listed.has(symbol)) found.add(symbol)
  }
  return [...found].sort()
}

const text = (value: unknown): string | null => {
  if (typeof value === "string") return value
  if (value !== null && typeof value === "object" && "value" in value && typeof value.value === "string") {
    return value.value
  }
  return null
}
const date = (value: unknown): Date | null => {
  if (typeof value !== "string") return null
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? null : new Date(ms)
}
// Feeds put HTML in summaries; stories are shown as text.
const plain = (html: string | null) =>
  html === null ? null : html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim().slice(0, 1000) || null

/** A story's link as an absolute http or https URL (relative to the feed's), or null: `javascript:` and the like are dropped. */
const webLink = (link: string | null, base: string | undefined): string | null => {
  if (!link) return null
  try {
    const url = new URL(link.trim(), base)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null
  } catch {
    return null
  }
}

// The feed parser and its XML parser (about 350 KB of modules), loaded when a feed is first read
// rather than at every start.
const feedsmith = Effect.promise(() => import("feedsmith"))

/**
 * The stories of an RSS, RDF, Atom or JSON feed read from `base`: those without an http or https
 * link are skipped. Fails when the body is no such feed.
 */
export const feedItems = (body: string, listed: ReadonlySet<string>, base?: string) =>
  Effect.flatMap(feedsmith, ({ parseFeed }) => Effect.try(() => itemsOf(parseFeed(body), listed, base)))

const itemsOf = (
  parsed: ReturnType<typeof import("feedsmith").parseFeed>,
  listed: ReadonlySet<string>,
  base: string | undefined
): Array<FeedItem> => {
  const raw: Array<{ link: string | null; title: string | null; summary: string | null; published: Date | null }> =
    parsed.format === "atom"
      ? (parsed.feed.entries ?? []).map((e) => ({
        link: e.links?.find((l) => !l.rel || l.rel === "alternate")?.href ?? e.links?.[0]?.href ?? null,
        title: text(e.title),
        summary: text(e.summary) ?? text(e.content),
        published: date(e.published) ?? date(e.updated)
      }))
      : parsed.format === "json"
      ? (parsed.feed.items ?? []).map((i) => ({
        link: i.url ?? null,
        title: i.title ?? null,
        summary: i.summary ?? i.content_text ?? null,
        published: date(i.date_published)
      }))
      : (parsed.feed.items ?? []).map((i) => ({
        link: i.link ?? null,
        title: i.title ?? null,
        summary: i.description ?? null,
        published: date("pubDate" in i ? i.pubDate : undefined)
      }))
  return raw.flatMap((r) => {
    const link = webLink(r.link, base)
    if (link === null) return []
    const title = plain(r.title) ?? link
    const summary = plain(r.summary)
    return [{
      link,
      title,
      summary,
      published_at: r.published,
      symbols: symbolsIn(`${title} ${summary ?? ""}`, listed)
    }]
  })
}

const feedTypes =
  "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"

/**
 * Fetches and parses one feed through the guarded fetcher; fails with a message fit for
 * `last_error`. Every failure to fetch reads the same (`fetchFailedText`), so a user learns nothing
 * of what the server can reach; the reason goes to the log.
 */
export const readFeed = (
  url: string,
  options: { readonly timeout: Duration.Duration; readonly maxBytes: number },
  listed: ReadonlySet<string>
) =>
  Effect.gen(function*() {
    const fetcher = yield* GuardedFetch
    const fetched = yield* fetcher.getText({
      url,
      accept: feedTypes,
      maxBytes: options.maxBytes,
      timeout: options.timeout
    }).pipe(
      Effect.tapError((e) =>
        Effect.logDebug("news feed not fetched").pipe(Effect.annotateLogs({ url, reason: e.reason, detail: e.detail }))
      ),
      Effect.mapError(() => fetchFailedText)
    )
    return yield* Effect.mapError(feedItems(fetched.body, listed, fetched.url), () =>
      "is not a valid RSS, Atom or JSON feed")
  })
