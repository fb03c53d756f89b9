import { packageBuild } from "../../tsup.shared.js"

export default packageBuild({
  index: "src/index.ts",
  contract: "src/contract.ts",
  // Started as a worker thread by BacktestThread.ts, which expects it next to itself.
  BacktestThreadEntry: "src/backtests/BacktestThreadEntry.ts"
})
