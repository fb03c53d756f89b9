/**
 * A chart drawn by TradingView's lightweight-charts: candles, volume bars, lines, their markers,
 * in one or more panes sharing the time axis. The library is loaded when the first chart shows (its
 * own chunk), so logging in does not wait for it. Once the series have their data the chart's
 * element says how many it drew (`data-series-count`, and `data-marker-count`), for the browser tests.
 */
import type { IChartApi, SeriesMarker, Time, UTCTimestamp } from "lightweight-charts"
import { useEffect, useRef } from "preact/hooks"

export const palette = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#9333ea", "#0891b2", "#db2777", "#65a30d"]
/** A rising candle or a winning trade; a falling one, a losing one. */
export const up = "#16a34a"
export const down = "#dc2626"

/** Seconds since the epoch, the time the library reads. */
export const seconds = (millis: number) => Math.floor(millis / 1000) as UTCTimestamp

interface Point {
  readonly time: number
}

/** Points by time in milliseconds, ascending with one per second (the library refuses repeats), in seconds. */
export const byTime = <A extends Point>(points: ReadonlyArray<A>): Array<A & { time: UTCTimestamp }> => {
  const kept = new Map<number, A & { time: UTCTimestamp }>()
  for (const point of points) kept.set(seconds(point.time), { ...point, time: seconds(point.time) })
  return [...kept.values()].sort((a, b) => a.time - b.time)
}

export type Series =
  | {
    readonly kind: "candles"
    readonly data: ReadonlyArray<
      { time: UTCTimestamp; open: number; high: number; low: number; close: number }
    >
    readonly markers?: ReadonlyArray<SeriesMarker<Time>>
  }
  | { readonly kind: "volume"; readonly data: ReadonlyArray<{ time: UTCTimestamp; value: number; color?: string }> }
  | {
    readonly kind: "line" | "area"
    readonly name: string
    readonly color?: string
    readonly pane?: number
    readonly data: ReadonlyArray<{ time: UTCTimestamp; value: number }>
  }

export const Chart = ({ label, series, tall }: { label: string; series: ReadonlyArray<Series>; tall?: boolean }) => {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = ref.current!
    let chart: IChartApi | undefined
    let current = true
    element.removeAttribute("data-series-count")
    element.removeAttribute("data-marker-count")
    void import("lightweight-charts").then((lib) => {
      if (!current) return
      const text = getComputedStyle(element).color
      chart = lib.createChart(element, {
        autoSize: true,
        layout: { background: { color: "transparent" }, textColor: text, attributionLogo: false },
        grid: { vertLines: { color: "#8882" }, horzLines: { color: "#8882" } },
        timeScale: { timeVisible: true, secondsVisible: false }
      })
      series.forEach((s, i) => {
        if (s.kind === "candles") {
          const candles = chart!.addSeries(lib.CandlestickSeries, {
            upColor: up,
            downColor: down,
            wickUpColor: up,
            wickDownColor: down,
            borderVisible: false
          })
          candles.setData([...s.data])
          if (s.markers !== undefined) {
            lib.createSeriesMarkers(candles, [...s.markers])
            element.dataset.markerCount = String(s.markers.length)
          }
        } else if (s.kind === "volume") {
          // On its own scale along the bottom fifth, under the candles.
          const volume = chart!.addSeries(lib.HistogramSeries, {
            priceScaleId: "volume",
            priceFormat: { type: "volume" }
          })
          volume.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } })
          volume.setData([...s.data])
        } else {
          const color = s.color ?? palette[i % palette.length]!
          const options = { title: s.name, lineWidth: 2 as const, priceLineVisible: false }
          const line = s.kind === "area"
            ? chart!.addSeries(lib.AreaSeries, {
              ...options,
              lineColor: color,
              topColor: `${color}11`,
              bottomColor: `${color}55`,
              invertFilledArea: true
            }, s.pane ?? 0)
            : chart!.addSeries(lib.LineSeries, { ...options, color }, s.pane ?? 0)
          line.setData([...s.data])
        }
      })
      chart.timeScale().fitContent()
      element.dataset.seriesCount = String(series.filter((s) => s.data.length > 0).length)
    })
    return () => {
      current = false
      chart?.remove()
    }
  }, [series])
  return <div ref={ref} class={tall ? "chart tall" : "chart"} role="img" aria-label={label} />
}
