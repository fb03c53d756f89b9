import { simulatedSymbol } from "../venues/SimulatedMarket.js"
import { type FundingFeed, fundingOf } from "./BacktestEngine.js"
import type { ThreadMarket } from "./BacktestThreadProtocol.js"

/**
 * A symbol's funding payments inside a run's thread: the venue's history sent along, or the
 * simulated venue's, computed here. The simulation walks the window minute by minute (seconds for
 * a thousand daily bars on a busy machine): the platform's own work, which the watchdog must not
 * take for a stuck program, so the thread is marked idle meanwhile.
 */
export const threadFunding = ({ funding, rules }: ThreadMarket, setBusy: (busy: boolean) => void): FundingFeed => {
  if (funding._tag === "Rates") return fundingOf(funding.rates)
  const market = simulatedSymbol(funding.seed, rules.symbol, funding.venue, funding.correlation)
  return (start, end) => {
    setBusy(false)
    try {
      return market?.fundingHistory(start, end) ?? []
    } finally {
      setBusy(true)
    }
  }
}

/**
 * The same, computed once for the whole of `[start, end)` and then sliced: what the trials of one
 * optimisation share, so that no trial walks the simulation again.
 */
export const sharedFunding = (market: ThreadMarket, start: number, end: number, setBusy: (busy: boolean) => void) =>
  fundingOf(threadFunding(market, setBusy)(start, end))
