import { packageBuild } from "../../tsup.shared.js"

export default packageBuild({
  index: "src/index.ts",
  contract: "src/contract.ts",
  // Worker threads' entry modules, at the same path under dist/ as under src/ (see jobs/WorkerThread.ts).
  "backtests/BacktestThreadEntry": "src/backtests/BacktestThreadEntry.ts",
  "automation/LiveDecisionEntry": "src/automation/LiveDecisionEntry.ts",
  "sandbox/CheckThreadEntry": "src/sandbox/CheckThreadEntry.ts",
  "research/TrialThreadEntry": "src/research/TrialThreadEntry.ts"
})
