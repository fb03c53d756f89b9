import { HttpApiBuilder, type HttpServerRequest, Multipart } from "@effect/platform"
import {
  CandleSyncs,
  CurrentUser,
  Datasets,
  type ImportFile,
  InvalidInput,
  MarketData,
  TradingApi
} from "@trading-platform/core"
import { Effect, Stream } from "effect"

const unreadableBody = () => new InvalidInput({ error: "The request body could not be read", issues: [] })

/** The files of an import: each file of a multipart/form-data body, or the body itself. */
const importedFiles = (
  request: HttpServerRequest.HttpServerRequest
): Stream.Stream<ImportFile<InvalidInput>, InvalidInput> =>
  /^multipart\/form-data\s*(;|$)/i.test(request.headers["content-type"] ?? "")
    ? request.multipartStream.pipe(
      Stream.filter(Multipart.isFile),
      Stream.map((file) => ({ bytes: Stream.mapError(file.content, unreadableBody), name: file.name })),
      Stream.mapError(unreadableBody)
    )
    : Stream.make({ bytes: Stream.mapError(request.stream, unreadableBody) })

export const MarketHttpLive = HttpApiBuilder.group(TradingApi, "market", (handlers) =>
  Effect.gen(function*() {
    const market = yield* MarketData
    const datasets = yield* Datasets
    const syncs = yield* CandleSyncs
    return handlers
      .handle("prices", ({ payload }) => market.prices(payload))
      .handle("klines", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => market.klines(caller, urlParams)))
      .handle("symbols", ({ urlParams }) => market.symbols(urlParams))
      .handle("query", ({ payload }) => market.query(payload))
      // Raw: the body streams into the import rather than being read whole first.
      .handleRaw("importCandles", ({ request, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          datasets.importFiles(caller, urlParams, importedFiles(request))))
      .handle("syncCandles", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => syncs.submit(caller, payload)))
      .handle("candleSync", ({ path }) => Effect.flatMap(CurrentUser, (caller) => syncs.get(caller, path.id)))
      .handle("cancelCandleSync", ({ path }) => Effect.flatMap(CurrentUser, (caller) => syncs.cancel(caller, path.id)))
      .handle("datasets", () => Effect.flatMap(CurrentUser, (caller) => datasets.list(caller)))
      .handle("dataset", ({ path }) => Effect.flatMap(CurrentUser, (caller) => datasets.get(caller, path.id)))
      .handle("removeDataset", ({ path }) => Effect.flatMap(CurrentUser, (caller) => datasets.remove(caller, path.id)))
  }))
