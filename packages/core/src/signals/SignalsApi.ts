import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import {
  EvaluateRequest,
  Evaluation,
  PoolId,
  PoolRequest,
  PoolUpdate,
  SamplingStatus,
  Signal,
  SignalId,
  SignalPool,
  SignalRequest,
  SignalsListing,
  TriggerList,
  TriggerQuery,
  WalletTrackingStatus
} from "./Signal.js"

export * from "./Signal.js"

const SignalPath = Schema.Struct({ id: idParam(SignalId) })
const PoolPath = Schema.Struct({ id: idParam(PoolId) })

/** Signals, signal pools, the trigger log and the engine's status: `/api/signals...`, `/api/sampling...`. */
export class SignalsApi extends HttpApiGroup.make("signals")
  .add(
    HttpApiEndpoint.get("list", "/signals")
      .addSuccess(SignalsListing)
      .annotate(OpenApi.Summary, "The caller's signal pools and signals")
  )
  .add(
    HttpApiEndpoint.post("create", "/signals")
      .setPayload(strictBody(SignalRequest))
      .addSuccess(Signal, { status: 201 })
      .annotate(OpenApi.Summary, "Create a signal: a metric over a time window compared with a threshold")
  )
  .add(
    HttpApiEndpoint.get("triggers", "/signals/triggers")
      .setUrlParams(TriggerQuery)
      .addSuccess(TriggerList)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "The caller's trigger log, newest first (filters: pool_id, symbol, since)")
  )
  .add(
    HttpApiEndpoint.get("walletTrackingStatus", "/signals/wallet-tracking/status")
      .addSuccess(WalletTrackingStatus)
      .annotate(OpenApi.Summary, "Wallet tracking over the caller's wallet_tracking pools")
  )
  .add(
    HttpApiEndpoint.post("createPool", "/signals/pools")
      .setPayload(strictBody(PoolRequest))
      .addSuccess(SignalPool, { status: 201 })
      .addError(ApiError.NotFound)
      .addError(ApiError.ExchangeMismatch)
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(OpenApi.Summary, "Create a signal pool over the caller's signals and symbols of the pool's venue")
  )
  .add(
    HttpApiEndpoint.put("updatePool", "/signals/pools/:id")
      .setPath(PoolPath)
      .setPayload(strictBody(PoolUpdate))
      .addSuccess(SignalPool)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.ExchangeMismatch)
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(OpenApi.Summary, "Update a pool; fields left out or null keep their value")
  )
  .add(
    HttpApiEndpoint.del("deletePool", "/signals/pools/:id")
      .setPath(PoolPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "Delete a pool with its edge state and trigger log")
  )
  .add(
    HttpApiEndpoint.get("get", "/signals/:id")
      .setPath(SignalPath)
      .addSuccess(Signal)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "One signal")
  )
  .add(
    HttpApiEndpoint.put("update", "/signals/:id")
      .setPath(SignalPath)
      .setPayload(strictBody(SignalRequest))
      .addSuccess(Signal)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.ExchangeMismatch)
      .annotate(OpenApi.Summary, "Replace a signal")
  )
  .add(
    HttpApiEndpoint.del("delete", "/signals/:id")
      .setPath(SignalPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.SignalInUse)
      .annotate(OpenApi.Summary, "Delete a signal that no pool lists")
  )
  .add(
    HttpApiEndpoint.post("evaluate", "/signals/:id/evaluate")
      .setPath(SignalPath)
      .setPayload(strictBody(EvaluateRequest))
      .addSuccess(Evaluation)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Summary,
        "Dry run: the signal's current value on a symbol and whether it is met; writes nothing"
      )
  )
  .add(
    HttpApiEndpoint.get("poolStatus", "/sampling/pool-status")
      .addSuccess(SamplingStatus)
      .annotate(OpenApi.Summary, "Sampling of the caller's pools: symbols, last sample, errors")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Signals")
{}
