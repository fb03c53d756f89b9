import { Effect, Layer } from "effect"
import { BiasCheckVerdicts } from "../backtests/BiasCheckVerdicts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { AutomationRunsLive } from "./AutomationRuns.js"
import { AutomationSchedulerLive, AutomationSignalTriggersLive } from "./AutomationScheduler.js"
import { Bindings } from "./Bindings.js"
import { BindingsRepo } from "./BindingsRepo.js"
import { DecisionOrders } from "./DecisionOrders.js"
import { LedgerRepo } from "./LedgerRepo.js"
import { ManualOrders } from "./ManualOrders.js"
import { OrderPlacement } from "./OrderPlacement.js"
import { ReconcileRequests } from "./ReconcileRequests.js"
import { Reconciliation, ReconciliationLive } from "./Reconciliation.js"
import { ReconciliationRepo } from "./ReconciliationRepo.js"
import { RiskFirewall } from "./RiskFirewall.js"
import { RiskRepo } from "./RiskRepo.js"
import { RunsRepo } from "./RunsRepo.js"

export {
  AutomationRunsLive,
  Bindings,
  DecisionOrders,
  LedgerRepo,
  ManualOrders,
  OrderPlacement,
  Reconciliation,
  RunsRepo
}

// The scheduler and the signal subscription each hold a lease, so only the
// instances that take part (AUTOMATION_ENABLED) compete for them; every instance may run runs.
const background = Layer.unwrapEffect(Effect.map(PlatformConfig, ({ automation }) =>
  automation.enabled
    ? Layer.mergeAll(AutomationSchedulerLive, AutomationSignalTriggersLive, AutomationRunsLive, ReconciliationLive)
    : AutomationRunsLive))

/**
 * Live automation: bindings and the reads of runs, orders and positions, and this instance's
 * background work (run workers; scheduler, exit watcher and signal-triggered runs when enabled),
 * sharing the repositories and the workers' wake-up signal. Needs the signal engine, programs,
 * accounts and their venue credentials.
 */
export const AutomationLive = Layer.mergeAll(Bindings.Default, ManualOrders.Default, background).pipe(
  Layer.provideMerge(Reconciliation.Default),
  // Programs' runs and AI traders' rounds place their decisions' orders the same way.
  Layer.provideMerge(DecisionOrders.Default),
  Layer.provideMerge(OrderPlacement.Default),
  Layer.provideMerge(ReconcileRequests.Default),
  // Every order passes the risk firewall as it settles.
  Layer.provideMerge(RiskFirewall.Default),
  Layer.provideMerge(Layer.mergeAll(
    BindingsRepo.Default,
    RunsRepo.Default,
    LedgerRepo.Default,
    ReconciliationRepo.Default,
    RiskRepo.Default,
    // Bindings that would trade live need their program's passed bias check.
    BiasCheckVerdicts.Default
  ))
)
