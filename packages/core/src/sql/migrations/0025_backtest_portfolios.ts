import { script } from "../SqlScript.js"

/**
 * A backtest trades a list of symbols from one balance and its program may read longer
 * timeframes; trades and fills name their symbol. Earlier backtests traded their one symbol, which
 * their stored trades and fills now name too.
 */
export default script(`
  ALTER TABLE backtests ADD COLUMN symbols text;
  ALTER TABLE backtests ADD COLUMN timeframes text NOT NULL DEFAULT '[]';
  UPDATE backtests SET symbols = json_build_array(symbol)::text;
  ALTER TABLE backtests ALTER COLUMN symbols SET NOT NULL;
  UPDATE backtests SET result = (
    SELECT (r || jsonb_build_object(
      'trades', COALESCE(
        (SELECT jsonb_agg(t || jsonb_build_object('symbol', backtests.symbol) ORDER BY n)
          FROM jsonb_array_elements(r -> 'trades') WITH ORDINALITY AS listed (t, n)),
        '[]'::jsonb),
      'fills', COALESCE(
        (SELECT jsonb_agg(f || jsonb_build_object('symbol', backtests.symbol) ORDER BY n)
          FROM jsonb_array_elements(COALESCE(r -> 'fills', '[]'::jsonb)) WITH ORDINALITY AS listed (f, n)),
        '[]'::jsonb)
    ))::text
    FROM (SELECT backtests.result::jsonb AS r) AS stored
  )
  WHERE result IS NOT NULL;
`)
