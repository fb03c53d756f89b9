import type { SeriesMarker, Time } from "lightweight-charts"
import { useMemo, useState } from "preact/hooks"
import { byTime, Chart, down, seconds, type Series, up } from "./Chart.js"
import { ErrorText, Field, number, Pager, Table, useAction, useLoad, usePages } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

export type Backtest = Awaited<ReturnType<PromiseClient["backtests"]["get"]>>

/** The largest fall from a running peak, at each point, in percent (0 or below). */
const drawdowns = (values: ReadonlyArray<number>) => {
  let peak = -Infinity
  return values.map((value) => {
    peak = Math.max(peak, value)
    return peak > 0 ? (value / peak - 1) * 100 : 0
  })
}

// Enough candles for a long backtest's chart, at most this many pages of the market's klines.
const candlePages = 5
const tradesPage = 20

/** The candles the backtest ran on, from its start to its end, a page of 1000 at a time. */
const candlesOf = async (client: PromiseClient, backtest: Backtest) => {
  const candles: Array<{ time: number; open: number; high: number; low: number; close: number; volume: number }> = []
  let start: string | null | undefined = backtest.start
  for (let page = 0; page < candlePages && start != null && start < backtest.end; page++) {
    const answer: Awaited<ReturnType<PromiseClient["market"]["klines"]>> = await client.market.klines({
      urlParams: {
        symbol: backtest.symbol,
        timeframe: backtest.timeframe,
        exchange: backtest.exchange,
        start,
        limit: 1000
      }
    })
    candles.push(...answer.klines.filter((k) => k.time < Date.parse(backtest.end)))
    start = answer.next_start
  }
  return candles
}

/** Entries as arrows (up for a long, down for a short), exits as dots coloured by the trade's result. */
const tradeMarkers = (backtest: Backtest): Array<SeriesMarker<Time>> =>
  backtest.trades
    .filter((t) => t.symbol === backtest.symbol)
    .flatMap((t): Array<SeriesMarker<Time>> => [
      t.side === "long"
        ? { time: seconds(t.entry_time), position: "belowBar", shape: "arrowUp", color: up, text: "long" }
        : { time: seconds(t.entry_time), position: "aboveBar", shape: "arrowDown", color: down, text: "short" },
      {
        time: seconds(t.exit_time),
        position: t.side === "long" ? "aboveBar" : "belowBar",
        shape: "circle",
        color: t.pnl >= 0 ? up : down,
        text: t.exit_reason === "signal" ? "exit" : t.exit_reason.replace("_", " ")
      }
    ])
    .sort((a, b) => (a.time as number) - (b.time as number))

const Candles = ({ client, backtest }: { client: PromiseClient; backtest: Backtest }) => {
  const candles = useLoad(() => candlesOf(client, backtest), [backtest.id])
  const series = useMemo((): ReadonlyArray<Series> => {
    const data = byTime(candles.value ?? [])
    return [{ kind: "candles", data, markers: tradeMarkers(backtest) }, {
      kind: "volume",
      data: data.map((c) => ({ time: c.time, value: c.volume, color: c.close >= c.open ? `${up}55` : `${down}55` }))
    }]
  }, [candles.value])
  return (
    <>
      <h4>{backtest.symbol} {backtest.timeframe}, with the trades</h4>
      <ErrorText error={candles.error} />
      {candles.value !== undefined && (
        <Chart label={`Candles of ${backtest.symbol} with entries and exits`} series={series} tall />
      )}
    </>
  )
}

const Trades = ({ client, backtest }: { client: PromiseClient; backtest: Backtest }) => {
  const page = usePages(
    (urlParams) => client.backtests.trades({ path: { id: backtest.id }, urlParams }),
    tradesPage,
    [backtest.id]
  )
  const total = page.value?.total ?? 0
  return (
    <section class="trades">
      <h4>Trades ({total})</h4>
      <ErrorText error={page.error} />
      {page.value !== undefined && (
        <>
          <Table
            class="trades"
            headers={[
              "symbol",
              "side",
              "size",
              "entry",
              "entry price",
              "exit",
              "exit price",
              "fee",
              "PnL",
              "exit reason"
            ]}
            rows={page.value.trades.map((t) => [
              t.symbol,
              t.side,
              number(t.size, 6),
              new Date(t.entry_time).toISOString().slice(0, 16),
              number(t.entry_price),
              new Date(t.exit_time).toISOString().slice(0, 16),
              number(t.exit_price),
              number(t.fee),
              number(t.pnl),
              t.exit_reason
            ])}
          />
          {total > tradesPage && <Pager offset={page.offset} limit={tradesPage} total={total} onPage={page.goTo} />}
        </>
      )}
    </section>
  )
}

const percentiles = ["p5", "p25", "p50", "p75", "p95"] as const
/** The fan's lines: the middle darkest, the outer ones lightest (symmetric about the median). */
const fanColours = {
  returns: { p5: "#93c5fd", p25: "#60a5fa", p50: "#1d4ed8", p75: "#60a5fa", p95: "#93c5fd" },
  drawdowns: { p5: "#fca5a5", p25: "#f87171", p50: "#b91c1c", p75: "#f87171", p95: "#fca5a5" }
} as const
/** The backtest's own path through the fan. */
export const ownPath = "#d97706"

/**
 * The Monte Carlo on the backtest's trades (the API's defaults: 1000 reshuffles, seeded): the
 * percentiles of the final return fanning out from the start to the end, with the backtest's own
 * return through them, and those of the largest drawdown below, with its own; then the figures.
 */
const MonteCarlo = ({ client, backtest }: { client: PromiseClient; backtest: Backtest }) => {
  // Resampled by default: reshuffled trades all end at the same return (only their order changes).
  const [method, setMethod] = useState<"resample" | "reshuffle">("resample")
  const report = useLoad(
    () => client.backtests.robustness({ path: { id: backtest.id }, payload: { monte_carlo: { method } } }),
    [backtest.id, method]
  )
  const fan = useMemo((): ReadonlyArray<Series> => {
    const mc = report.value?.monte_carlo
    const points = byTime(backtest.equity_curve.map((p) => ({ time: p.time, value: p.equity })))
    if (mc === undefined || points.length < 2) return []
    const [first, last] = [points[0]!.time, points.at(-1)!.time]
    const falls = drawdowns(points.map((p) => p.value))
    const line = (name: string, color: string, pane: number, end: number): Series => ({
      kind: "line",
      name,
      color,
      pane,
      data: [{ time: first, value: 0 }, { time: last, value: end }]
    })
    return [
      ...percentiles.map((p) => line(`${p} return %`, fanColours.returns[p], 0, mc.final_return_percent[p])),
      {
        kind: "line",
        name: "this backtest",
        color: ownPath,
        data: points.map((p) => ({ time: p.time, value: (p.value / mc.initial_balance - 1) * 100 }))
      },
      ...percentiles.map((p) => line(`${p} drawdown %`, fanColours.drawdowns[p], 1, -mc.max_drawdown_percent[p])),
      {
        kind: "line",
        name: "its drawdown",
        color: ownPath,
        pane: 1,
        data: points.map((p, i) => ({ time: p.time, value: falls[i]! }))
      }
    ]
  }, [report.value])
  const mc = report.value?.monte_carlo
  const sharpe = report.value?.deflated_sharpe
  return (
    <section class="monte-carlo">
      <h4>Monte Carlo of the trades</h4>
      <form onSubmit={(event) => event.preventDefault()}>
        <Field label="Runs draw the trades">
          <select
            name="mc_method"
            value={method}
            onChange={(event) => setMethod(event.currentTarget.value as typeof method)}
          >
            <option value="resample">resampled (with replacement)</option>
            <option value="reshuffle">reshuffled (each once)</option>
          </select>
        </Field>
      </form>
      <ErrorText error={report.error} />
      {mc !== undefined && (
        <>
          <p class="muted">
            {mc.runs} runs, the {mc.trades} trades {mc.method === "reshuffle" ? "reshuffled" : "resampled"} (seed{" "}
            {mc.seed}): the 5th to 95th percentiles of the final return fan out from the start, the largest drawdown's
            below; the backtest's own in orange.
          </p>
          {fan.length > 0 && <Chart label="Monte Carlo fan of the final return and the drawdown" series={fan} tall />}
          <Table
            class="percentiles"
            headers={["percentile", ...percentiles]}
            rows={[
              ["final return %", ...percentiles.map((p) => number(mc.final_return_percent[p]))],
              ["max drawdown %", ...percentiles.map((p) => number(mc.max_drawdown_percent[p]))]
            ]}
          />
          <p>
            Probability of ruin (a {number(mc.ruin_drawdown_percent)} % fall): {number(mc.probability_of_ruin * 100, 1)}
            {" "}
            %
            {sharpe === null || sharpe === undefined
              ? ""
              : `; probabilistic Sharpe ${number(sharpe.probabilistic_sharpe, 3)}, deflated ${
                number(sharpe.deflated_sharpe, 3)
              }`}
          </p>
        </>
      )}
    </section>
  )
}

/**
 * A backtest's metrics, its candles with the trades on them, its equity and drawdown, its Monte
 * Carlo fan and its trades; a queued or running one can be cancelled.
 */
export const BacktestResult = ({ client, backtest: shown }: { client: PromiseClient; backtest: Backtest }) => {
  const [backtest, setBacktest] = useState(shown)
  const cancel = useAction()
  const m = backtest.metrics
  const curve = useMemo((): ReadonlyArray<Series> => {
    const points = byTime(backtest.equity_curve.map((p) => ({ time: p.time, value: p.equity })))
    const falls = drawdowns(points.map((p) => p.value))
    return [
      { kind: "line", name: "Equity", data: points },
      {
        kind: "area",
        name: "Drawdown %",
        color: down,
        pane: 1,
        data: points.map((p, i) => ({ time: p.time, value: falls[i]! }))
      }
    ]
  }, [backtest])
  return (
    <section class="backtest" data-status={backtest.status}>
      <h3>Backtest #{backtest.id}: {backtest.symbols.join(", ")} {backtest.timeframe}, {backtest.status}</h3>
      {backtest.error !== null && <p class="error">{backtest.error}</p>}
      {(backtest.status === "queued" || backtest.status === "running") && (
        <div class="actions">
          <button
            type="button"
            disabled={cancel.busy}
            onClick={() =>
              void cancel.run(async () => setBacktest(await client.backtests.cancel({ path: { id: backtest.id } })))}
          >
            Cancel backtest
          </button>
          <ErrorText error={cancel.error} />
        </div>
      )}
      {m !== null && (
        <Table
          class="metrics"
          headers={["PnL", "PnL %", "trades", "win rate", "max drawdown %", "Sharpe", "Sortino", "profit factor"]}
          rows={[[
            number(m.total_pnl),
            number(m.total_pnl_percent),
            m.total_trades,
            `${number(m.win_rate * 100, 1)} %`,
            number(m.max_drawdown_percent),
            number(m.sharpe),
            number(m.sortino),
            number(m.profit_factor)
          ]]}
        />
      )}
      {backtest.status === "completed" && <Candles client={client} backtest={backtest} />}
      {backtest.equity_curve.length > 1 && (
        <>
          <h4>Equity and drawdown</h4>
          <Chart label="Equity curve, and drawdown from its running peak" series={curve} tall />
        </>
      )}
      {backtest.status === "completed" && <MonteCarlo client={client} backtest={backtest} />}
      {backtest.status === "completed" && <Trades client={client} backtest={backtest} />}
    </section>
  )
}
