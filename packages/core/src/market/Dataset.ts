import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { defaultedParam } from "../http/Defaults.js"
import { idParam, StoredId } from "../http/IdParam.js"
import { Exchange, Timeframe } from "../venues/Venue.js"

export const DatasetId = StoredId.pipe(Schema.brand("DatasetId"))
export type DatasetId = typeof DatasetId.Type

/** A dataset's name: what `exchange` names it by (`dataset:NAME`). */
export const DatasetName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{1,64}$/, { message: () => "must be 1 to 64 letters, digits, '_', '.' or '-'" })
)

/**
 * Where candles come from, wherever a request names an `exchange`: a venue, or one of the caller's
 * imported datasets as `dataset:NAME` (traded by the rules of the dataset's venue).
 */
export const CandleExchange = Schema.Union(
  Exchange,
  Schema.TemplateLiteral("dataset:", Schema.String).pipe(
    Schema.pattern(/^dataset:[A-Za-z0-9_.-]{1,64}$/, { message: () => "must be venue1, venue2 or dataset:NAME" })
  )
)
export type CandleExchange = typeof CandleExchange.Type

/** The dataset's name when `exchange` names one. */
export const datasetName = (exchange: CandleExchange) =>
  exchange.startsWith("dataset:") ? exchange.slice("dataset:".length) : undefined

export class Dataset extends Schema.Class<Dataset>("Dataset")({
  id: DatasetId,
  name: DatasetName,
  /** The venue whose rules a backtest on it trades by (leverage caps, fees). */
  venue: Exchange,
  symbol: Schema.String,
  /** The timeframe of its bars; coarser ones are built from them. */
  timeframe: Timeframe,
  bars: Schema.Int,
  /** Open time of the first and the last bar, ISO-8601; null while it holds none. */
  first: Schema.NullOr(Schema.String),
  last: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class DatasetsResponse extends Schema.Class<DatasetsResponse>("DatasetsResponse")({
  datasets: Schema.Array(Dataset)
}) {}

export const DatasetIdParam = Schema.Struct({ id: idParam(DatasetId) })

/** `POST /api/market/candles/import`: the dataset the file goes into, created on first import. */
export const CandleImportParams = Schema.Struct({
  name: DatasetName,
  /** The venue whose rules a backtest on the dataset follows; venue1 when absent. */
  venue: defaultedParam(Exchange, "venue1"),
  symbol: Schema.Uppercase.pipe(
    Schema.pattern(/^[A-Z0-9]{1,20}$/, { message: () => "must be 1 to 20 letters or digits, such as BTC" })
  ),
  timeframe: Timeframe
})
export type CandleImportParams = typeof CandleImportParams.Type

/** The body of an import, as the document shows it: the server reads the request's bytes as they stream in. */
export const CandleFile = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/octet-stream" })
)

export const CandleImportProblem = Schema.Struct({
  /** 1-based line in its file. */
  line: Schema.Int,
  /** The file inside a zip; absent for a plain CSV. */
  file: Schema.optional(Schema.String),
  message: Schema.String
})
export type CandleImportProblem = typeof CandleImportProblem.Type

export class CandleImportResult extends Schema.Class<CandleImportResult>("CandleImportResult")({
  dataset: Dataset,
  /** Rows read and stored (a row already stored is written again, unchanged: a re-import is idempotent). */
  imported: Schema.Int,
  /** Rows refused, each reported in `problems` (the first 1000). */
  rejected: Schema.Int,
  problems: Schema.Array(CandleImportProblem)
}) {}
