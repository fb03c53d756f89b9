import { script } from "../SqlScript.js"

/**
 * Funding payments in the candle store: a venue's payments of one symbol are a series of its own
 * (`candle_series` with the timeframe `funding`), covered like bars, one compact row per payment.
 */
export default script(`
  CREATE TABLE funding_rates (
    series_id integer NOT NULL REFERENCES candle_series (id) ON DELETE CASCADE,
    time bigint NOT NULL,
    rate double precision NOT NULL,
    PRIMARY KEY (series_id, time)
  );
`)
