import { useState } from "preact/hooks"
import { ErrorText, number, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Ranking = Awaited<ReturnType<PromiseClient["ranking"]["table"]>>
type Row = Ranking["rows"][number]

/** The factor ranking of the venue's symbols; a column header sorts by it, again to reverse. */
export const RankingView = ({ client }: { client: PromiseClient }) => {
  const ranking = useLoad(() => client.ranking.table({ urlParams: {} }), [])
  const [sort, setSort] = useState({ key: "rank", ascending: true })
  if (ranking.value === undefined) {
    return (
      <section>
        <h2>Ranking</h2>
        {ranking.error === undefined
          ? <p role="status">Ranking the venue's symbols…</p>
          : <ErrorText error={ranking.error} />}
      </section>
    )
  }
  const r = ranking.value
  const columns: Array<[string, (row: Row) => number | string | null]> = [
    ["rank", (row) => row.rank],
    ["symbol", (row) => row.symbol],
    ["score", (row) => row.score],
    ...Object.keys(r.weights).map((
      key
    ): [string, (row: Row) => number | null] => [key, (row) => row.factors[key] ?? null])
  ]
  const value = columns.find(([key]) => key === sort.key)![1]
  const rows = [...r.rows].sort((a, b) => {
    const [x, y] = [value(a), value(b)]
    // Missing values last, whichever the direction.
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1
    const order = typeof x === "string" ? x.localeCompare(String(y)) : x - (y as number)
    return sort.ascending ? order : -order
  })
  return (
    <section>
      <h2>Ranking</h2>
      <p role="status">{r.exchange}, {r.timeframe}, computed {r.computed_at}</p>
      <div class="scroll">
        <table class="ranking">
          <thead>
            <tr>
              {columns.map(([key]) => (
                <th
                  scope="col"
                  data-key={key}
                  aria-sort={key === sort.key ? (sort.ascending ? "ascending" : "descending") : "none"}
                >
                  <button
                    type="button"
                    onClick={() => setSort({ key, ascending: key === sort.key ? !sort.ascending : true })}
                  >
                    {key}
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr>
                {columns.map(([key, get]) => {
                  const v = get(row)
                  return (
                    <td class={key === "symbol" ? "text" : undefined}>
                      {typeof v === "number" ? number(v, 4) : v ?? "–"}
                    </td>
                  )
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
