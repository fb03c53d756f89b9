import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { AccountPath } from "../accounts/Account.js"
import { ApiError } from "../http/Errors.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { ProgramPath } from "../programs/ProgramsApi.js"
import { Authentication } from "../users/Authentication.js"
import {
  Binding,
  BindingList,
  BindingPath,
  BindingRequest,
  BindingUpdate,
  ClientOrderId,
  FundingList,
  ManualOrderRequest,
  Order,
  OrderList,
  PositionList,
  ReconciliationList,
  RunList
} from "./Automation.js"

export * from "./Automation.js"

/** Live automation: bindings of programs to accounts, their runs, and the orders and positions they leave. */
export class AutomationApi extends HttpApiGroup.make("automation")
  .add(
    HttpApiEndpoint.post("create", "/programs/:id/bindings")
      .setPath(ProgramPath)
      .setPayload(strictBody(BindingRequest))
      .addError(ApiError.SymbolNotListed)
      .addSuccess(Binding, { status: 201 })
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.BiasCheckRequired)
      .annotate(
        OpenApi.Description,
        "A binding needs a trigger: `interval_minutes`, `signal_pool_ids`, or both (400 naming `interval_minutes` " +
          "otherwise). The account and the pools must be the caller's (403), and the leverage within the account's " +
          "maximum (422 `leverage_too_high`). An enabled binding whose orders would go to a venue that is not " +
          "simulated needs a passed bias check of the program's current code (422 `bias_check_required`, unless " +
          "REQUIRE_BIAS_CHECK is false)."
      )
      .annotate(
        OpenApi.Summary,
        "Bind the program to an account: symbols, a schedule (every N minutes) and/or signal pools, params"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/programs/:id/bindings")
      .setPath(ProgramPath)
      .setUrlParams(Pagination)
      .addSuccess(BindingList)
      .annotate(OpenApi.Summary, "The program's bindings, oldest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/programs/:id/bindings/:binding_id")
      .setPath(BindingPath)
      .addSuccess(Binding)
      .annotate(OpenApi.Summary, "One binding")
  )
  .add(
    HttpApiEndpoint.put("update", "/programs/:id/bindings/:binding_id")
      .setPath(BindingPath)
      .setPayload(strictBody(BindingUpdate))
      .addError(ApiError.SymbolNotListed)
      .addSuccess(Binding)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.BiasCheckRequired)
      .annotate(
        OpenApi.Summary,
        "Change a binding; enabled: false stops its schedule and signals, true starts them again"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/programs/:id/bindings/:binding_id")
      .setPath(BindingPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a binding with its runs; its orders stay in the account's history")
  )
  .add(
    HttpApiEndpoint.post("run", "/programs/:id/bindings/:binding_id/run")
      .setPath(BindingPath)
      .addSuccess(RunList, { status: 202 })
      .addError(ApiError.BiasCheckRequired)
      .annotate(OpenApi.Summary, "Queue one run per symbol now, whatever the schedule")
  )
  .add(
    HttpApiEndpoint.get("runs", "/programs/:id/bindings/:binding_id/runs")
      .setPath(BindingPath)
      .setUrlParams(Pagination)
      .addSuccess(RunList)
      .annotate(OpenApi.Summary, "The binding's runs, newest first: trigger, status, decision and error")
  )
  .add(
    HttpApiEndpoint.get("orders", "/account/:account_id/orders")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(OrderList)
      .annotate(OpenApi.Summary, "The account's orders from automation runs and by hand, newest first")
  )
  .add(
    HttpApiEndpoint.post("placeOrder", "/account/:account_id/orders")
      .setPath(AccountPath)
      .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(ClientOrderId) }))
      .setPayload(strictBody(ManualOrderRequest))
      .addSuccess(Order, { status: 201 })
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.RiskBlocked)
      .addError(ApiError.OrderRejected)
      .addError(ApiError.VenueRejected)
      .addError(ApiError.Conflict)
      .annotate(
        OpenApi.Description,
        "A market order by hand, filled as a program's is: on paper at the venue's price, or through the venue; " +
          "the rulebook and the account's risk firewall apply. A refusal is recorded as a rejected order and answers " +
          "422: `risk_blocked` (with the `rule`) or `order_rejected`. With an `Idempotency-Key` header or " +
          "`client_order_id`, the same key answers the same order."
      )
      .annotate(OpenApi.Summary, "Place an order by hand")
  )
  .add(
    HttpApiEndpoint.get("positions", "/account/:account_id/positions")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(PositionList)
      .annotate(OpenApi.Summary, "The account's open positions, by symbol")
  )
  .add(
    HttpApiEndpoint.get("funding", "/account/:account_id/funding")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(FundingList)
      .annotate(OpenApi.Summary, "The funding its paper positions paid and received, newest first")
  )
  .add(
    HttpApiEndpoint.get("reconciliations", "/account/:account_id/reconciliations")
      .setPath(AccountPath)
      .setUrlParams(Pagination)
      .addSuccess(ReconciliationList)
      .annotate(
        OpenApi.Summary,
        "The differences the reconciliation found between the ledger and the venue, and how each was resolved, newest first"
      )
  )
  .addError(ApiError.Forbidden)
  .addError(ApiError.NotFound)
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Automation")
{}
