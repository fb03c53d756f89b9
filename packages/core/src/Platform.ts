import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { AssistantChat } from "./assistant/AssistantChat.js"
import { AssistantToolsLive } from "./assistant/AssistantTools.js"
import { ConversationsRepo } from "./assistant/ConversationsRepo.js"
import { OfflineAnalyst } from "./assistant/OfflineAnalyst.js"
import { OpenAiCompatibleModel } from "./assistant/OpenAiCompatibleModel.js"
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
import { QuickJsProgramRuntime } from "./sandbox/QuickJsRuntime.js"
import { DatabaseLive } from "./sql/Database.js"
import { Users } from "./users/Users.js"
import { VenueAccounts } from "./venues/VenueAccounts.js"
import { VenuesLive } from "./venues/VenuesLive.js"
import { Trader } from "./trader/Trader.js"
import { Rankings } from "./ranking/Rankings.js"
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

// The signals service and this instance's engine share their repositories.
const SignalsLive = Layer.mergeAll(Signals.Default, SignalEngineLive).pipe(
  Layer.provideMerge(Layer.mergeAll(SignalsRepo.Default, SignalEngineRepo.Default))
)

// The configured provider, else the built-in offline analyst.
const AssistantModelLive = Layer.unwrapEffect(Effect.map(PlatformConfig, ({ assistant }) =>
  Option.match(assistant.provider, {
    onNone: () => OfflineAnalyst,
    onSome: (provider) => OpenAiCompatibleModel({ ...provider, timeout: assistant.timeout }).pipe(Layer.provide(FetchHttpClient.layer))
  })))

const AssistantLive = AssistantChat.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(ConversationsRepo.Default, AssistantModelLive, AssistantToolsLive))
)

const ServicesLive = Layer.mergeAll(
  Users.Default,
  MarketData.Default,
  VenueAccounts.Default,
  Trader.Default,
  Analytics.Default,
  Rankings.Default,
  BacktestsLive,
  SignalsLive
).pipe(
  Layer.provideMerge(Programs.Default),
  Layer.provideMerge(AccountsLive),
  Layer.provideMerge(VenuesLive),
  Layer.provideMerge(ProgramRuntimeLive),
  Layer.provideMerge(DatabaseLive)
)

/**
 * The platform's services on the configured storage, with this instance's backtest workers
 * running for as long as the layer lives; needs `PlatformConfig`.
 */
export const PlatformLive = Layer.provideMerge(AssistantLive, ServicesLive)
