import { script } from "../SqlScript.js"

// Since when each symbol's samples cover the time up to its last sample without a hole longer than
// three sampling intervals, as the signal engine works it out each round: the pool status shows
// each window's coverage from it without reading a day of samples per symbol.
export default script(`
  ALTER TABLE signal_sample_health ADD COLUMN covered_from timestamptz;
`)
