/** The trading platform without a server: the contract, the services and their storage. */
export * from "./contract.js"

// Running it: the settings, and the whole platform as one layer on its storage.
export * from "./config/PlatformConfig.js"
export { PlatformLive } from "./Platform.js"
export { DatabaseLive, Storage } from "./sql/Database.js"
export { migrate, migrations } from "./sql/Migrations.js"
export * as PgliteClient from "./sql/PgliteClient.js"

// One line per feature (`<feature>/<Feature>Live.ts`): its service and the layer that runs it.
export * from "./users/UsersLive.js"
export * from "./accounts/AccountsLive.js"
export * from "./market/MarketLive.js"
export * from "./venues/VenueAccountsLive.js"
export * from "./trader/TraderLive.js"
export * from "./programs/ProgramsLive.js"
export * from "./backtests/BacktestsLive.js"
export * from "./analytics/AnalyticsLive.js"
export * from "./sandbox/SandboxLive.js"
export * from "./jobs/JobsLive.js"

// What the features are built on, for hosts, tools and benchmarks.
export { Secrets } from "./secrets/Secrets.js"
export { ownedBy } from "./http/Ownership.js"
export * from "./venues/Venue.js"
export { VenuesLive } from "./venues/VenuesLive.js"
export { makeSimulatedVenue } from "./venues/SimulatedVenue.js"
export { makeVenue1Http } from "./venues/Venue1Http.js"
export { makeVenue2Http } from "./venues/Venue2Http.js"
export * from "./sandbox/Decision.js"
export { type ProgramRun } from "./sandbox/ProgramRuntime.js"
export { compileProgram, ProgramLanguage } from "./sandbox/ProgramSource.js"
export { candleWindow, defaultSandboxLimits, QuickJsProgramRuntime, type SandboxLimits } from "./sandbox/QuickJsRuntime.js"
export * from "./backtests/BacktestEngine.js"
export type { BacktestMetrics } from "./backtests/BacktestMetrics.js"
export { maxBacktestBars } from "./backtests/Backtests.js"
export { barsPerCheckpoint } from "./backtests/BacktestWorkers.js"
export { downsample, maxEquityPoints } from "./backtests/BacktestThreadProtocol.js"
