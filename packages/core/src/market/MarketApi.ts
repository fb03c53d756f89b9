import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { Authentication } from "../users/Authentication.js"
import {
  KlinesParams,
  KlinesResponse,
  MarketDataQuery,
  MarketDataResponse,
  PricesRequest,
  PricesResponse,
  SymbolsParams,
  SymbolsResponse
} from "./Market.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export { Candle, Exchange, SymbolSpec, Timeframe, timeframeMillis } from "../venues/Venue.js"
export * from "./Market.js"

/** Market data from the venues, cached briefly: `/api/market/...` and the programs' query. */
export class MarketApi extends HttpApiGroup.make("market")
  .add(
    HttpApiEndpoint.post("prices", "/market/prices")
      .setPayload(PricesRequest)
      .addSuccess(PricesResponse)
      .annotate(OpenApi.Summary, "Price, 24h change and volume, funding and open interest of up to 50 symbols")
  )
  .add(
    HttpApiEndpoint.get("klines", "/market/klines")
      .setUrlParams(KlinesParams)
      .addSuccess(KlinesResponse)
      .annotate(OpenApi.Summary, "The latest closed candles of one symbol; an unknown symbol answers 404")
  )
  .add(
    HttpApiEndpoint.get("symbols", "/market/symbols")
      .setUrlParams(SymbolsParams)
      .addSuccess(SymbolsResponse)
      .annotate(OpenApi.Summary, "The symbols a venue lists, with each one's tick size and max leverage")
  )
  .add(
    HttpApiEndpoint.post("query", "/programs/query-market-data")
      .setPayload(MarketDataQuery)
      .addSuccess(MarketDataResponse)
      .annotate(OpenApi.Summary, "Prices, candles and indicators of up to 50 symbols, as programs see them")
  )
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Market data")
{}
