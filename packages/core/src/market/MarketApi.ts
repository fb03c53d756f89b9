import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { CandleSync, CandleSyncPath, CandleSyncRequest } from "./CandleSync.js"
import {
  CandleFile,
  CandleImportParams,
  CandleImportResult,
  Dataset,
  DatasetIdParam,
  DatasetsResponse
} from "./Dataset.js"
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
export * from "./CandleSync.js"
export * from "./Dataset.js"
export * from "./Market.js"

/** Market data from the venues, cached briefly: `/api/market/...` and the programs' query. */
export class MarketApi extends HttpApiGroup.make("market")
  .add(
    HttpApiEndpoint.post("prices", "/market/prices")
      .setPayload(strictBody(PricesRequest))
      .addSuccess(PricesResponse)
      .annotate(OpenApi.Summary, "Price, 24h change and volume, funding and open interest of up to 50 symbols")
  )
  .add(
    HttpApiEndpoint.get("klines", "/market/klines")
      .setUrlParams(KlinesParams)
      .addError(ApiError.SymbolNotListed)
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
      .setPayload(strictBody(MarketDataQuery))
      .addSuccess(MarketDataResponse)
      .annotate(OpenApi.Summary, "Prices, candles and indicators of up to 50 symbols, as programs see them")
  )
  .add(
    HttpApiEndpoint.post("importCandles", "/market/candles/import")
      .setUrlParams(CandleImportParams)
      .setPayload(CandleFile)
      .addSuccess(CandleImportResult)
      .addError(ApiError.Conflict)
      .annotate(
        OpenApi.Description,
        "Imports a candle file into the caller's dataset `name` (created on first import; 409 when it holds another " +
          "venue, symbol or timeframe). The body is the file itself (text/csv, application/zip or " +
          "application/octet-stream) or multipart/form-data with one or more files, up to 512 MiB in all, read as it " +
          "streams in. CSV layouts: the venues' kline dumps (open time, open, high, low, close, volume, close time, " +
          "quote volume, trades, taker buy volumes) or `time,open,high,low,close,volume`, with or without a header, " +
          "times in epoch ms or µs (ISO-8601 too in the plain layout); a zip of such files. Bad rows are not kept and " +
          "are reported by line; a file with no good row answers 400. Importing the same rows again changes nothing."
      )
      .annotate(OpenApi.Summary, "Import a candle file (CSV or zip) into a dataset")
  )
  .add(
    HttpApiEndpoint.post("syncCandles", "/market/candles/sync")
      .setPayload(strictBody(CandleSyncRequest))
      .addError(ApiError.SymbolNotListed)
      .addSuccess(CandleSync, { status: 202 })
      .annotate(
        OpenApi.Description,
        "Queues a durable job that fetches an HTTP venue's bars of `[from, to)` into the candle store, a page of 1000 " +
          "bars at a time, waiting out the venue's 429 or 503 for its Retry-After; what is stored already is not " +
          "fetched again, so a sync resumes where one stopped. A simulated venue's candles are computed: 400. `to` " +
          "must be after `from`, at most 5,256,000 bars (ten years of 1m) apart (400 naming `to`)."
      )
      .annotate(OpenApi.Summary, "Sync a venue's candles of a range into the store (a job)")
  )
  .add(
    HttpApiEndpoint.get("candleSync", "/market/candles/sync/:id")
      .setPath(CandleSyncPath)
      .addSuccess(CandleSync)
      .addError(ApiError.Forbidden)
      .annotate(OpenApi.Summary, "A candle sync: status, progress and the bars stored")
  )
  .add(
    HttpApiEndpoint.post("cancelCandleSync", "/market/candles/sync/:id/cancel")
      .setPath(CandleSyncPath)
      .addSuccess(CandleSync)
      .addError(ApiError.Forbidden)
      .addError(ApiError.Conflict)
      .annotate(OpenApi.Summary, "Cancel a candle sync that has not finished (409 when it has)")
  )
  .add(
    HttpApiEndpoint.get("datasets", "/market/datasets")
      .addSuccess(DatasetsResponse)
      .annotate(OpenApi.Summary, "The caller's imported datasets, each usable as the exchange `dataset:NAME`")
  )
  .add(
    HttpApiEndpoint.get("dataset", "/market/datasets/:id")
      .setPath(DatasetIdParam)
      .addSuccess(Dataset)
      .addError(ApiError.Forbidden)
      .annotate(OpenApi.Summary, "One imported dataset: its bars' count and range")
  )
  .add(
    HttpApiEndpoint.del("removeDataset", "/market/datasets/:id")
      .setPath(DatasetIdParam)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .annotate(OpenApi.Summary, "Delete an imported dataset with its bars")
  )
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Market data")
{}
