import { Effect, Layer } from "effect"
import { Analytics } from "./analytics/Analytics.js"
import { Backtests } from "./backtests/Backtests.js"
import { BacktestSignal } from "./backtests/BacktestSignal.js"
import { BacktestsRepo } from "./backtests/BacktestsRepo.js"
import { BacktestWorkersLive } from "./backtests/BacktestWorkers.js"
import { PlatformConfig } from "./config/PlatformConfig.js"
import { Accounts } from "./accounts/Accounts.js"
import { AccountsRepo } from "./accounts/AccountsRepo.js"
import { MarketData } from "./market/MarketData.js"
import { Secrets } from "./secrets/Secrets.js"
import { Programs } from "./programs/Programs.js"
import { ProgramsRepo } from "./programs/ProgramsRepo.js"
import { QuickJsProgramRuntime } from "./sandbox/QuickJsRuntime.js"
import { DatabaseLive } from "./sql/Database.js"
import { Users } from "./users/Users.js"
import { VenueAccounts } from "./venues/VenueAccounts.js"
import { VenuesLive } from "./venues/VenuesLive.js"
import { Trader } from "./trader/Trader.js"
import { Arena, ArenaPnlRefresherLive } from "./arena/Arena.js"
import { ArenaRepo } from "./arena/ArenaRepo.js"
import { AutomationRunsLive } from "./automation/AutomationRuns.js"
import { AutomationSchedulerLive, AutomationSignalTriggersLive } from "./automation/AutomationScheduler.js"
import { AutomationSignal } from "./automation/AutomationSignal.js"
import { BackgroundLeases } from "./automation/BackgroundLeases.js"
import { Bindings } from "./automation/Bindings.js"
import { BindingsRepo } from "./automation/BindingsRepo.js"
import { LedgerRepo } from "./automation/LedgerRepo.js"
import { RunsRepo } from "./automation/RunsRepo.js"
import { VenueCredentialsRepo } from "./venues/VenueCredentialsRepo.js"
import { StorageStats } from "./system/StorageStats.js"
import { SignalEngineLive } from "./signals/SignalEngineLive.js"
import { SignalEngineRepo } from "./signals/SignalEngineRepo.js"
import { Signals } from "./signals/Signals.js"
import { SignalsRepo } from "./signals/SignalsRepo.js"

// One Secrets for everyone: without SECRET_KEY in memory mode, each instance would have its own key.
const AccountsLive = Accounts.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, Secrets.Default))
)

// Backtest threads build their own runtime from the same limits.
const ProgramRuntimeLive = Layer.unwrapEffect(Effect.map(PlatformConfig, ({ sandbox }) => QuickJsProgramRuntime(sandbox)))

// The service that queues jobs and the workers that run them share one wake-up signal.
const BacktestsLive = Layer.mergeAll(Backtests.Default, BacktestWorkersLive).pipe(
  Layer.provideMerge(Layer.mergeAll(BacktestsRepo.Default, BacktestSignal.Default))
)

// Live automation: the service behind the HTTP reads, and (when enabled) the scheduler, the run
// workers and the PnL refresher, which share the repositories and the wake-up signal.
const AutomationBackground = Layer.unwrapEffect(Effect.map(PlatformConfig, ({ automation }) =>
  automation.enabled
    ? Layer.mergeAll(AutomationSchedulerLive, AutomationSignalTriggersLive, AutomationRunsLive, ArenaPnlRefresherLive)
    : AutomationRunsLive
))
const AutomationLive = Layer.mergeAll(Bindings.Default, Arena.Default, AutomationBackground).pipe(
  Layer.provideMerge(Layer.mergeAll(
    BindingsRepo.Default,
    RunsRepo.Default,
    LedgerRepo.Default,
    ArenaRepo.Default,
    BackgroundLeases.Default,
    AutomationSignal.Default,
    VenueCredentialsRepo.Default,
    ProgramsRepo.Default
  ))
)

// The signals service and this instance's engine share their repositories.
const SignalsLive = Layer.mergeAll(Signals.Default, SignalEngineLive).pipe(
  Layer.provideMerge(Layer.mergeAll(SignalsRepo.Default, SignalEngineRepo.Default))
)

/**
 * The platform's services on the configured storage, with this instance's backtest workers
 * running for as long as the layer lives; needs `PlatformConfig`.
 */
export const PlatformLive = Layer.mergeAll(
  Users.Default,
  MarketData.Default,
  VenueAccounts.Default,
  Trader.Default,
  Analytics.Default,
  BacktestsLive,
  AutomationLive,
  StorageStats.Default
).pipe(
  Layer.provideMerge(SignalsLive),
  Layer.provideMerge(Programs.Default),
  Layer.provideMerge(AccountsLive),
  Layer.provideMerge(VenuesLive),
  Layer.provideMerge(ProgramRuntimeLive),
  Layer.provideMerge(DatabaseLive)
)
