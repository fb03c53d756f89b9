import { script } from "../SqlScript.js"

/**
 * The candle store (`market/CandleStore.ts`):
 * - a series is one venue's (or one imported dataset's) bars of one symbol and timeframe;
 * - a series' bars are kept a UTC day to a row, keyed by the series and the day, so a range read is
 *   one index scan over few rows (a year of minutes is 365 rows, not 525,600): `data` packs each bar
 *   as six little-endian doubles (open time, open, high, low, close, volume), sorted by time;
 *   doubles hold every venue's decimal prices (up to 15 significant digits) exactly as sent;
 * - coverage records the spans of a venue series already fetched, merged, so a span the venue
 *   had no bars for is not asked again;
 * - a dataset is a user's imported candles, under a name, with the venue whose rules it trades by.
 */
export default script(`
  CREATE TABLE market_datasets (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    venue text NOT NULL,
    symbol text NOT NULL,
    timeframe text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (user_id, name)
  );

  CREATE TABLE candle_series (
    id serial PRIMARY KEY,
    venue text NOT NULL,
    symbol text NOT NULL,
    timeframe text NOT NULL,
    dataset_id integer REFERENCES market_datasets (id) ON DELETE CASCADE
  );
  CREATE UNIQUE INDEX candle_series_venue ON candle_series (venue, symbol, timeframe) WHERE dataset_id IS NULL;
  CREATE UNIQUE INDEX candle_series_dataset ON candle_series (dataset_id, timeframe) WHERE dataset_id IS NOT NULL;

  CREATE TABLE candle_days (
    series_id integer NOT NULL REFERENCES candle_series (id) ON DELETE CASCADE,
    day bigint NOT NULL,
    bars integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (series_id, day)
  );

  CREATE TABLE candle_coverage (
    series_id integer NOT NULL REFERENCES candle_series (id) ON DELETE CASCADE,
    start_time bigint NOT NULL,
    end_time bigint NOT NULL,
    PRIMARY KEY (series_id, start_time)
  );
`)
