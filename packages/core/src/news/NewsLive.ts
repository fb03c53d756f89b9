import { Layer } from "effect"
import { GuardedFetch } from "../fetch/GuardedFetch.js"
import { News, NewsFetcherLive } from "./News.js"
import { NewsRepo } from "./NewsRepo.js"

export { feedItems, symbolsIn } from "./FeedReader.js"
export { defaultNewsSources, News } from "./News.js"

/** News: the service, and this instance's background fetcher for as long as the layer lives. */
export const NewsLive = Layer.scopedDiscard(NewsFetcherLive).pipe(
  Layer.provideMerge(News.Default),
  Layer.provideMerge(NewsRepo.Default),
  Layer.provideMerge(GuardedFetch.Default)
)
