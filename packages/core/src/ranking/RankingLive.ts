import { Rankings } from "./Rankings.js"

export { builtinFactors, type FactorDefinition, findFactor } from "./FactorCatalogue.js"
export { factorValue, normalise, rankSymbols, type SymbolInputs, tableBars, winsorLimit } from "./FactorTable.js"
export { effectivenessBars, Rankings } from "./Rankings.js"

/** The ranking service; reads the venues and the signal engine's samples. */
export const RankingLive = Rankings.Default
