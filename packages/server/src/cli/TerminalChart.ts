/** Terminal drawing for the command line: a progress bar, a table and a line chart in plain characters. */

export const progressBar = (fraction: number, width = 30) => {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}%`
}

/** Two columns, labels left-aligned and values right-aligned. */
export const table = (rows: ReadonlyArray<readonly [string, string]>) => {
  const left = Math.max(...rows.map(([label]) => label.length))
  const right = Math.max(...rows.map(([, value]) => value.length))
  return rows.map(([label, value]) => `${label.padEnd(left)}  ${value.padStart(right)}`).join("\n")
}

/**
 * `values` as a line chart `height` rows tall and at most `width` columns wide (each column is the
 * last value of its slice), with the top and bottom values as the y-axis labels.
 */
export const lineChart = (values: ReadonlyArray<number>, width = 60, height = 10) => {
  if (values.length === 0) return "(no points)"
  const count = Math.min(width, values.length)
  const columns = Array.from({ length: count }, (_, i) => values[Math.floor(((i + 1) * values.length) / count) - 1]!)
  const min = Math.min(...columns)
  const max = Math.max(...columns)
  const rowOf = (v: number) => max === min ? 0 : Math.round(((v - min) / (max - min)) * (height - 1))
  const grid = Array.from({ length: height }, () => Array.from({ length: columns.length }, () => " "))
  columns.forEach((v, x) => (grid[height - 1 - rowOf(v)]![x] = "*"))
  const labels = [max.toFixed(2), min.toFixed(2)]
  const pad = Math.max(...labels.map((l) => l.length))
  return grid.map((row, y) =>
    `${(y === 0 ? labels[0]! : y === height - 1 ? labels[1]! : "").padStart(pad)} |${row.join("")}`
  ).join("\n")
}
