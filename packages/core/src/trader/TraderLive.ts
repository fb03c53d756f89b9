import { Trader } from "./Trader.js"

export { Trader }

/** Trader history of the caller's accounts on the platform's storage. */
export const TraderLive = Trader.Default
