import { Effect, Layer } from "effect"
import { Arena, ArenaPnlRefresherLive } from "../arena/Arena.js"
import { ArenaRepo } from "../arena/ArenaRepo.js"
import { AccountsRepo } from "../accounts/AccountsRepo.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { ProgramsRepo } from "../programs/ProgramsRepo.js"
import { VenueCredentialsRepo } from "../venues/VenueCredentialsRepo.js"
import { AutomationRunsLive } from "./AutomationRuns.js"
import { AutomationSchedulerLive, AutomationSignalTriggersLive } from "./AutomationScheduler.js"
import { AutomationSignal } from "./AutomationSignal.js"
import { BackgroundLeases } from "./BackgroundLeases.js"
import { Bindings } from "./Bindings.js"
import { BindingsRepo } from "./BindingsRepo.js"
import { LedgerRepo } from "./LedgerRepo.js"
import { RunsRepo } from "./RunsRepo.js"

export { Arena, AutomationRunsLive, Bindings, LedgerRepo, RunsRepo }

// The scheduler, the signal subscription and the PnL refresher each hold a lease, so only the
// instances that take part (AUTOMATION_ENABLED) compete for them; every instance may run runs.
const background = Layer.unwrapEffect(Effect.map(PlatformConfig, ({ automation }) =>
  automation.enabled
    ? Layer.mergeAll(AutomationSchedulerLive, AutomationSignalTriggersLive, AutomationRunsLive, ArenaPnlRefresherLive)
    : AutomationRunsLive
))

/**
 * Live automation: bindings and the reads of runs, orders and positions, arena PnL, and this
 * instance's background work (run workers; scheduler, signal-triggered runs and PnL refresher
 * when enabled), sharing the repositories and the workers' wake-up signal. Needs the signal engine.
 */
export const AutomationLive = Layer.mergeAll(Bindings.Default, Arena.Default, background).pipe(
  Layer.provideMerge(Layer.mergeAll(
    BindingsRepo.Default,
    RunsRepo.Default,
    LedgerRepo.Default,
    ArenaRepo.Default,
    BackgroundLeases.Default,
    AutomationSignal.Default,
    VenueCredentialsRepo.Default,
    ProgramsRepo.Default,
    AccountsRepo.Default
  ))
)
