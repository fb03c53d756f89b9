import { useMemo, useState } from "preact/hooks"
import { byTime, Chart, palette } from "./Chart.js"
import { ErrorText, Field, number, Table, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

const windows = ["24h", "7d", "30d", "90d", "all"] as const

/** The leaderboard: every dashboard account's return over the window on one chart, AI and program traders side by side, ranked in a table. */
export const ArenaView = ({ client }: { client: PromiseClient }) => {
  const [window, setWindow] = useState<(typeof windows)[number]>("7d")
  const board = useLoad(() => client.arena.leaderboard({ urlParams: { window, limit: 50 } }), [window])
  const entries = board.value?.entries ?? []
  // Returns rather than equity, so accounts of any size share the axis.
  const series = useMemo(() =>
    entries.map((e, i) => ({
      kind: "line" as const,
      name: e.name,
      color: palette[i % palette.length]!,
      data: byTime(
        e.equity_curve.map((p) => ({ time: Date.parse(p.at), value: (p.equity / e.start_equity - 1) * 100 }))
      )
    })), [board.value])
  const trader = (e: (typeof entries)[number]) =>
    [
      e.model === null ? "manual" : `AI (${e.model}${e.ai_trading ? "" : ", off"})`,
      ...(e.program_bindings > 0 ? [`${e.program_bindings} program binding${e.program_bindings === 1 ? "" : "s"}`] : [])
    ].join(", ")
  return (
    <section>
      <h2>Arena</h2>
      <form class="inline" onSubmit={(event) => event.preventDefault()}>
        <Field label="Window">
          <select
            name="window"
            value={window}
            onChange={(event) => setWindow(event.currentTarget.value as (typeof windows)[number])}
          >
            {windows.map((w) => <option value={w}>{w}</option>)}
          </select>
        </Field>
      </form>
      <ErrorText error={board.error} />
      {board.value !== undefined && (entries.length === 0
        ? <p class="muted">No account on the dashboard has been measured yet.</p>
        : (
          <>
            <p class="muted">
              {board.value.total} accounts, {board.value.from.slice(0, 16)} to {board.value.to.slice(0, 16)} (UTC)
            </p>
            <Chart label="Return of each account over the window, in percent" series={series} tall />
            <ul class="legend">
              {entries.map((e, i) => <li class={`s${i % palette.length}`}>{e.name}</li>)}
            </ul>
            <Table
              class="leaderboard"
              headers={[
                "rank",
                "account",
                "owner",
                "trader",
                "equity",
                "return %",
                "max drawdown %",
                "Sharpe",
                "trades",
                "win rate"
              ]}
              rows={entries.map((e) => [
                e.rank,
                e.name,
                e.owner,
                trader(e),
                number(e.equity),
                number(e.return_percent),
                number(e.max_drawdown_percent),
                number(e.sharpe),
                e.trades,
                e.win_rate === null ? "–" : `${number(e.win_rate * 100, 0)}%`
              ])}
            />
          </>
        ))}
    </section>
  )
}
