import { svg } from "./Dom.js"

const width = 640
const height = 180
const pad = 4

/** The largest fall from a running peak, at each point, as a fraction (0 or below). */
export const drawdowns = (values: ReadonlyArray<number>) => {
  let peak = -Infinity
  return values.map((value) => {
    peak = Math.max(peak, value)
    return peak > 0 ? value / peak - 1 : 0
  })
}

/** One line of a chart: a value at each time. */
export interface Series {
  readonly name: string
  readonly times: ReadonlyArray<number>
  readonly values: ReadonlyArray<number>
}

/**
 * A line chart of one or more series on shared axes, scaled to fit, each drawn as one SVG
 * polyline with a point per value (class `line s<i>` for its colour, its name as its title);
 * `fill` shades the area between the first line and zero (for the drawdown).
 */
export const linesChart = (
  label: string,
  series: ReadonlyArray<Series>,
  options: { readonly fill?: boolean; readonly format: (value: number) => string }
) => {
  const times = series.flatMap((s) => s.times)
  const values = series.flatMap((s) => s.values)
  const [t0, t1] = [Math.min(...times), Math.max(...times)]
  const low = Math.min(...values, ...(options.fill ? [0] : []))
  const high = Math.max(...values, ...(options.fill ? [0] : []))
  const x = (t: number) => pad + ((t - t0) / (t1 - t0 || 1)) * (width - 2 * pad)
  const y = (v: number) => pad + (1 - (v - low) / (high - low || 1)) * (height - 2 * pad)
  const pointsOf = (s: Series) => s.values.map((v, i) => `${x(s.times[i]!).toFixed(1)},${y(v).toFixed(1)}`).join(" ")
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", "aria-label": label },
    svg("title", {}, label),
    options.fill && series[0] !== undefined
      ? svg("polygon", {
        class: "area",
        points: `${x(t0).toFixed(1)},${y(0).toFixed(1)} ${pointsOf(series[0])} ${x(t1).toFixed(1)},${y(0).toFixed(1)}`
      })
      : null,
    ...series.map((s, i) =>
      svg("polyline", { class: `line s${i % 8}`, points: pointsOf(s) }, svg("title", {}, s.name))
    ),
    svg("text", { x: pad + 2, y: 14, class: "scale" }, options.format(high)),
    svg("text", { x: pad + 2, y: height - 6, class: "scale" }, options.format(low))
  )
}

/** A line chart of `values` over `times` (see `linesChart`). */
export const lineChart = (
  label: string,
  times: ReadonlyArray<number>,
  values: ReadonlyArray<number>,
  options: { readonly fill?: boolean; readonly format: (value: number) => string }
) => linesChart(label, [{ name: label, times, values }], options)
