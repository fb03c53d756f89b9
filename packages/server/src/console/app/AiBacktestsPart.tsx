/**
 * An AI account's backtests (`/api/account/{id}/backtest(s)`): a form to start one over a past
 * range, the account's runs 10 to a page with their status (a running one can be cancelled), and
 * the one shown followed until it ends, then its result: metrics, the model's calls, the equity
 * and each decision slot.
 */
import { useState } from "preact/hooks"
import { byTime, Chart } from "./Chart.js"
import {
  EditFormShell,
  ErrorText,
  finished,
  Input,
  number,
  numberOrNull,
  Pager,
  Select,
  symbolsOf,
  Table,
  type Timeframe,
  timeframes,
  useAction,
  useEditForm,
  useFollow,
  usePages
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type AiBacktest = Awaited<ReturnType<PromiseClient["aitraders"]["backtestGet"]>>
type AccountId = AiBacktest["account_id"]

const runsPage = 10
const slotsPage = 20
const day = 86_400_000
const dateOf = (millis: number) => new Date(millis).toISOString().slice(0, 10)
const when = (iso: string) => iso.slice(0, 16).replace("T", " ")

/** A completed run: its metrics, what the model cost, its equity, and each slot's answer, 20 to a page. */
const AiBacktestResult = ({ run }: { run: AiBacktest }) => {
  const [offset, setOffset] = useState(0)
  const m = run.metrics
  return (
    <div class="ai-backtest-result">
      {m !== null && (
        <Table
          class="ai-backtest-metrics"
          headers={["return", "PnL", "final balance", "trades", "win rate", "max drawdown", "Sharpe"]}
          rows={[[
            `${number(m.total_pnl_percent)}%`,
            number(m.total_pnl),
            number(run.final_balance),
            m.total_trades,
            `${number(m.win_rate)}%`,
            `${number(m.max_drawdown_percent)}%`,
            number(m.sharpe)
          ]]}
        />
      )}
      <p class="muted">
        Model {run.model ?? "–"}: {run.model_calls ?? 0} calls, {run.cached_calls ?? 0} answered from the cache,{" "}
        {(run.prompt_tokens ?? 0) + (run.completion_tokens ?? 0)} tokens, cost {number(run.cost, 6)}
        {run.stop_reason === null ? "" : `; stopped early: ${run.stop_reason}`}
      </p>
      {run.equity_curve.length > 0 && (
        <Chart
          label={`Equity of AI backtest #${run.id}`}
          series={[{
            kind: "line",
            name: "equity",
            data: byTime(run.equity_curve).map((p) => ({ time: p.time, value: p.equity }))
          }]}
        />
      )}
      <Table
        class="ai-backtest-slots"
        headers={["slot", "answer", "decisions", "error"]}
        rows={run.slots.slice(offset, offset + slotsPage).map((s) => [
          when(new Date(s.time).toISOString()),
          s.answer,
          <span class="text">
            {s.decisions?.map((d) => `${d.operation} ${d.symbol}${d.reason ? ` (${d.reason})` : ""}`).join("; ") ?? "–"}
          </span>,
          <span class="text">{s.error ?? ""}</span>
        ])}
      />
      {run.slots.length > slotsPage && (
        <Pager limit={slotsPage} offset={offset} total={run.slots.length} onPage={setOffset} />
      )}
    </div>
  )
}

export const AiBacktests = ({ client, accountId }: { client: PromiseClient; accountId: AccountId }) => {
  const path = { account_id: accountId }
  const runs = usePages((urlParams) => client.aitraders.backtestList({ path, urlParams }), runsPage, [accountId])
  const [shown, setShown] = useState<AiBacktest>()
  const cancel = useAction()
  const open = useAction()
  const now = Date.now()
  const f = useEditForm({
    start: dateOf(now - 8 * day),
    end: dateOf(now - day),
    symbols: "",
    timeframe: "",
    interval_minutes: "",
    initial_balance: "10000",
    max_model_calls: "100",
    mode: "model"
  }, { symbol_not_listed: "symbols", no_market_data: "end" })
  const running = shown !== undefined && !finished(shown.status)
  useFollow(shown, (id) => client.aitraders.backtestGet({ path: { ...path, backtest_id: id } }), (next) => {
    setShown(next)
    if (finished(next.status)) runs.reload()
  })
  const show = (backtestId: number) =>
    void open.run(async () =>
      setShown(await client.aitraders.backtestGet({ path: { ...path, backtest_id: backtestId as never } }))
    )
  const list = runs.value?.backtests ?? []
  return (
    <section class="ai-backtests">
      <h4>AI backtests</h4>
      <EditFormShell
        f={f}
        label="New AI backtest"
        submitLabel="Start AI backtest"
        focus={false}
        onSubmit={f.submit(async (v) => {
          const symbols = symbolsOf(v.symbols)
          const interval = numberOrNull(v.interval_minutes)
          const queued = await client.aitraders.backtest({
            path,
            payload: {
              start: new Date(v.start).toISOString(),
              end: new Date(v.end).toISOString(),
              ...(symbols.length === 0 ? {} : { symbols }),
              ...(v.timeframe === "" ? {} : { timeframe: v.timeframe as Timeframe }),
              ...(interval === null ? {} : { interval_minutes: interval }),
              initial_balance: Number(v.initial_balance),
              max_model_calls: Number(v.max_model_calls),
              mode: v.mode as "model" | "replay"
            }
          })
          setShown(queued)
          runs.goTo(0)
        })}
      >
        <Input f={f} name="start" label="From" type="date" required />
        <Input f={f} name="end" label="To" type="date" required />
        <Input f={f} name="symbols" label="Symbols (empty: the trader's)" />
        <Select
          f={f}
          name="timeframe"
          label="Timeframe"
          options={[["", "the trader's"], ...timeframes.map((t) => [t, t] as const)]}
        />
        <Input f={f} name="interval_minutes" label="Every (minutes, empty: the trader's)" type="number" min="1" />
        <Input f={f} name="initial_balance" label="Starting balance" type="number" step="any" />
        <Input f={f} name="max_model_calls" label="Model calls at most" type="number" min="0" />
        <Select
          f={f}
          name="mode"
          label="Mode"
          options={[["model", "model (cached answers free)"], ["replay", "replay (cache only)"]]}
        />
      </EditFormShell>
      <ErrorText error={runs.error ?? open.error} />
      {runs.value !== undefined && (list.length === 0 && runs.offset === 0
        ? <p class="muted">No AI backtests yet.</p>
        : (
          <>
            <Table
              class="ai-backtest-runs"
              headers={["run", "range", "symbols", "status", "progress"]}
              rows={list.map((b) => [
                <button
                  type="button"
                  class="link"
                  aria-current={b.id === shown?.id ? "true" : undefined}
                  onClick={() => show(b.id)}
                >
                  #{b.id}
                </button>,
                `${when(b.start)} – ${when(b.end)}`,
                `${b.symbols.join(", ")} ${b.timeframe}`,
                b.error === null ? b.status : `${b.status}: ${b.error}`,
                `${number(b.progress * 100, 0)}%`
              ])}
            />
            <Pager limit={runsPage} offset={runs.offset} shown={list.length} onPage={runs.goTo} />
          </>
        ))}
      {shown !== undefined && (
        <div class="ai-backtest" data-status={shown.status}>
          <p class="actions" role="status">
            <span>
              AI backtest #{shown.id}: {shown.status}, {number(shown.progress * 100, 0)}%
              {shown.error === null ? "" : ` (${shown.error})`}
            </span>
            {running && (
              <button
                type="button"
                disabled={cancel.busy}
                onClick={() =>
                  void cancel.run(async () =>
                    setShown(await client.aitraders.backtestCancel({ path: { ...path, backtest_id: shown.id } }))
                  )}
              >
                Cancel AI backtest
              </button>
            )}
          </p>
          <ErrorText error={cancel.error} />
          {shown.status === "completed" && <AiBacktestResult run={shown} />}
        </div>
      )}
    </section>
  )
}
