import { Layer } from "effect"
import { AccountsLive } from "./accounts/AccountsLive.js"
import { AnalyticsLive } from "./analytics/AnalyticsLive.js"
import { AssistantLive } from "./assistant/AssistantLive.js"
import { BacktestsLive } from "./backtests/BacktestsLive.js"
import { JobsLive } from "./jobs/JobsLive.js"
import { MarketLive } from "./market/MarketLive.js"
import { NewsLive } from "./news/NewsLive.js"
import { ProgramsLive } from "./programs/ProgramsLive.js"
import { SandboxLive } from "./sandbox/SandboxLive.js"
import { DatabaseLive } from "./sql/Database.js"
import { TraderLive } from "./trader/TraderLive.js"
import { UsersLive } from "./users/UsersLive.js"
import { VenueAccountsLive } from "./venues/VenueAccountsLive.js"
import { VenuesLive } from "./venues/VenuesLive.js"
import { Rankings } from "./ranking/Rankings.js"
import { SignalEngineLive } from "./signals/SignalEngineLive.js"
import { SignalEngineRepo } from "./signals/SignalEngineRepo.js"
import { Signals } from "./signals/Signals.js"
import { SignalsRepo } from "./signals/SignalsRepo.js"

// The signals service and this instance's engine share their repositories.
const SignalsLive = Layer.mergeAll(Signals.Default, SignalEngineLive).pipe(
  Layer.provideMerge(Layer.mergeAll(SignalsRepo.Default, SignalEngineRepo.Default))
)

/**
 * The platform's services on the configured storage, with this instance's background work (the
 * job workers) running for as long as the layer lives; needs `PlatformConfig`. One `<Feature>Live`
 * per line: the features first, then, below them, what they use (each may use those below it).
 */
export const PlatformLive = AssistantLive.pipe(
  Layer.provideMerge(Layer.mergeAll(
    UsersLive,
    MarketLive,
    VenueAccountsLive,
    TraderLive,
    AnalyticsLive,
    BacktestsLive,
    Rankings.Default,
    SignalsLive,
    NewsLive
  )),
  Layer.provideMerge(ProgramsLive),
  Layer.provideMerge(AccountsLive),
  Layer.provideMerge(VenuesLive),
  Layer.provideMerge(SandboxLive),
  Layer.provideMerge(JobsLive),
  Layer.provideMerge(DatabaseLive)
)
