import { useMemo, useState } from "preact/hooks"
import { byTime, Chart, down, type Series, up } from "./Chart.js"
import { ErrorText, Field, number, type Timeframe, timeframes, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

/** The latest candles of any symbol the venue lists, on any timeframe, with their volume. */
export const MarketView = ({ client }: { client: PromiseClient }) => {
  const [choice, setChoice] = useState({ symbol: "BTC", timeframe: "1h" as Timeframe })
  const [symbol, setSymbol] = useState(choice.symbol)
  const symbols = useLoad(() => client.market.symbols(), [])
  const klines = useLoad(
    () => client.market.klines({ urlParams: { symbol: choice.symbol, timeframe: choice.timeframe, limit: 300 } }),
    [choice.symbol, choice.timeframe]
  )
  const series = useMemo((): ReadonlyArray<Series> => {
    const data = byTime(klines.value?.klines ?? [])
    return [{ kind: "candles", data }, {
      kind: "volume",
      data: data.map((c) => ({ time: c.time, value: c.volume, color: c.close >= c.open ? `${up}55` : `${down}55` }))
    }]
  }, [klines.value])
  const last = klines.value?.klines.at(-1)
  return (
    <section>
      <h2>Market</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault()
          setChoice({ ...choice, symbol: symbol.trim().toUpperCase() })
        }}
      >
        <Field label="Symbol">
          <input
            name="symbol"
            list="symbols"
            size={10}
            required
            value={symbol}
            onInput={(e) => setSymbol(e.currentTarget.value)}
          />
        </Field>
        <datalist id="symbols">{symbols.value?.symbols.map((s) => <option value={s.symbol} />)}</datalist>
        <Field label="Timeframe">
          <select
            name="timeframe"
            value={choice.timeframe}
            onChange={(e) => setChoice({ ...choice, timeframe: e.currentTarget.value as Timeframe })}
          >
            {timeframes.map((t) => <option>{t}</option>)}
          </select>
        </Field>
        <button type="submit">Show</button>
        <ErrorText error={klines.error} />
      </form>
      {klines.value !== undefined && klines.error === undefined && (
        <>
          <p class="muted">
            {klines.value.exchange} {klines.value.symbol} {klines.value.timeframe}: {klines.value.klines.length} candles
            {last === undefined ? "" : `, last close ${number(last.close)}`}
          </p>
          <Chart label={`Candles of ${klines.value.symbol} on ${klines.value.timeframe}`} series={series} tall />
        </>
      )}
    </section>
  )
}
