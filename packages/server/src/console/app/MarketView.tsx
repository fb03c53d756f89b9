import { timeframeMillis } from "@trading-platform/client/contract"
import type { IChartApi, ISeriesApi, UTCTimestamp } from "lightweight-charts"
import { useEffect, useRef, useState } from "preact/hooks"
import { byTime, down, up } from "./Chart.js"
import { ErrorText, Field, number, type Timeframe, timeframes, useLoad } from "./Controls.js"
import { DatasetsPart } from "./DatasetsPart.js"
import "./MarketView.css"
import { describe, type PromiseClient, sessionClient } from "./Session.js"

interface Bar {
  time: UTCTimestamp
  open: number
  high: number
  low: number
  close: number
  volume: number
}

/** Where the price socket is: its state shows beside the chart. */
type Live =
  | { readonly state: "connecting" }
  | { readonly state: "live" }
  | { readonly state: "reconnecting"; readonly drops: number }
  | { readonly state: "stopped"; readonly error: string }

const volumeOf = (bar: Bar) => ({
  time: bar.time,
  value: bar.volume,
  color: bar.close >= bar.open ? `${up}55` : `${down}55`
})

/**
 * A price moved: it closes the candle of its time (high and low widened), or opens the next one.
 * Answers the bar changed, or undefined for a price older than the last candle.
 */
const applyPrice = (bars: Array<Bar>, step: number, price: number, at: number): Bar | undefined => {
  const time = (Math.floor(at / step) * step / 1000) as UTCTimestamp
  const last = bars.at(-1)
  if (last !== undefined && time < last.time) return undefined
  if (last !== undefined && time === last.time) {
    const bar = { ...last, close: price, high: Math.max(last.high, price), low: Math.min(last.low, price) }
    bars[bars.length - 1] = bar
    return bar
  }
  // The venue's volume of a candle still forming is not in a price update: it shows once the candle is read again.
  const bar = { time, open: last?.close ?? price, high: price, low: price, close: price, volume: 0 }
  bar.high = Math.max(bar.open, price)
  bar.low = Math.min(bar.open, price)
  bars.push(bar)
  return bar
}

/**
 * The latest candles of any symbol the venue lists, on any timeframe, with their volume, kept up
 * to date by the symbol's prices over the WebSocket (`prices:{SYMBOL}`). A dropped socket is
 * reconnected by the client's retry rule and subscribed again; the view says so meanwhile.
 */
export const MarketView = ({ client }: { client: PromiseClient }) => {
  const [choice, setChoice] = useState({ symbol: "BTC", timeframe: "1h" as Timeframe })
  const [symbol, setSymbol] = useState(choice.symbol)
  const [live, setLive] = useState<Live>({ state: "connecting" })
  const [round, setRound] = useState(0)
  const [last, setLast] = useState<{ bar: Bar; count: number }>()
  const symbols = useLoad(() => client.market.symbols(), [])
  const klines = useLoad(
    () => client.market.klines({ urlParams: { symbol: choice.symbol, timeframe: choice.timeframe, limit: 300 } }),
    [choice.symbol, choice.timeframe]
  )
  const bars = useRef<Array<Bar>>([])
  const series = useRef<{ candles: ISeriesApi<"Candlestick">; volume: ISeriesApi<"Histogram"> } | undefined>(undefined)
  const element = useRef<HTMLDivElement>(null)
  const loaded = klines.value !== undefined && klines.error === undefined ? klines.value : undefined

  // The chart, drawn anew for each load; the prices then update its last candle in place.
  useEffect(() => {
    if (loaded === undefined) return
    bars.current = byTime(loaded.klines).map(({ close, high, low, open, time, volume }) => ({
      time,
      open,
      high,
      low,
      close,
      volume
    }))
    const shown = bars.current.at(-1)
    setLast(shown === undefined ? undefined : { bar: shown, count: bars.current.length })
    const div = element.current!
    let chart: IChartApi | undefined
    let current = true
    div.removeAttribute("data-series-count")
    void import("lightweight-charts").then((lib) => {
      if (!current) return
      chart = lib.createChart(div, {
        autoSize: true,
        layout: {
          background: { color: "transparent" },
          textColor: getComputedStyle(div).color,
          attributionLogo: false
        },
        grid: { vertLines: { color: "#8882" }, horzLines: { color: "#8882" } },
        timeScale: { timeVisible: true, secondsVisible: false }
      })
      const candles = chart.addSeries(lib.CandlestickSeries, {
        upColor: up,
        downColor: down,
        wickUpColor: up,
        wickDownColor: down,
        borderVisible: false
      })
      candles.setData(bars.current.map(({ volume: _, ...bar }) => bar))
      const volume = chart.addSeries(lib.HistogramSeries, { priceScaleId: "volume", priceFormat: { type: "volume" } })
      volume.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } })
      volume.setData(bars.current.map(volumeOf))
      series.current = { candles, volume }
      chart.timeScale().fitContent()
      div.dataset.seriesCount = String(bars.current.length === 0 ? 0 : 2)
    })
    return () => {
      current = false
      series.current = undefined
      chart?.remove()
    }
  }, [loaded])

  // The symbol's prices over the WebSocket, on a client of its own whose sockets say when they close and subscribe.
  useEffect(() => {
    if (loaded === undefined) return
    let current = true
    let drops = 0
    const step = timeframeMillis[loaded.timeframe]
    setLive({ state: "connecting" })
    class WatchedSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | Array<string>) {
        super(url, protocols)
        this.addEventListener("message", (event) => {
          if (current && typeof event.data === "string" && event.data.startsWith(`{"type":"subscribed"`)) {
            setLive({ state: "live" })
          }
        })
        this.addEventListener("close", () => current && setLive({ state: "reconnecting", drops: ++drops }))
      }
    }
    const stream = (sessionClient({ WebSocket: WatchedSocket }) ?? client)
      .subscribe([`prices:${loaded.symbol}`])[Symbol.asyncIterator]()
    void (async () => {
      for (let next = await stream.next(); !next.done && current; next = await stream.next()) {
        const update = next.value.data as { price: number; timestamp: string }
        const bar = applyPrice(bars.current, step, update.price, Date.parse(update.timestamp))
        if (bar === undefined) continue
        series.current?.candles.update({
          time: bar.time,
          open: bar.open,
          high: bar.high,
          low: bar.low,
          close: bar.close
        })
        series.current?.volume.update(volumeOf(bar))
        setLast({ bar, count: bars.current.length })
      }
      if (current) setLive({ state: "stopped", error: "The price stream ended" })
    })().catch((error) => current && setLive({ state: "stopped", error: describe(error) }))
    return () => {
      current = false
      void stream.return?.()
    }
  }, [loaded, round])

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
      {loaded !== undefined && (
        <>
          <div class="live-line">
            <p class="muted">
              {loaded.exchange} {loaded.symbol} {loaded.timeframe}: {last?.count ?? 0} candles
              {last === undefined ? "" : `, last close ${number(last.bar.close, 8)}`}
            </p>
            <p class={`live ${live.state}`} role="status">
              {live.state === "connecting"
                ? "Connecting to live prices…"
                : live.state === "live"
                ? `Live: prices of ${loaded.symbol}`
                : live.state === "reconnecting"
                ? "Reconnecting to live prices…"
                : `Live prices stopped: ${live.error}`}
            </p>
            {live.state === "stopped" && (
              <button type="button" onClick={() => setRound((n) => n + 1)}>Reconnect</button>
            )}
          </div>
          <div
            ref={element}
            class="chart tall"
            role="img"
            aria-label={`Candles of ${loaded.symbol} on ${loaded.timeframe}`}
            data-candle-count={last?.count}
            data-last-time={last?.bar.time}
            data-last-close={last?.bar.close}
          />
        </>
      )}
      <DatasetsPart client={client} />
    </section>
  )
}
