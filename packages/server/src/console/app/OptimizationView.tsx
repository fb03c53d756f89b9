import { useEffect, useMemo, useState } from "preact/hooks"
import { byTime, Chart, type Series } from "./Chart.js"
import {
  DeleteButton,
  ErrorText,
  Field,
  number,
  Pager,
  Table,
  timeframes,
  useAction,
  useForm,
  useLoad
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Program = Awaited<ReturnType<PromiseClient["programs"]["get"]>>
type Optimization = Awaited<ReturnType<PromiseClient["optimizations"]["get"]>>
type Trial = Awaited<ReturnType<PromiseClient["optimizations"]["trials"]>>["trials"][number]
type Request = Optimization["request"]
type Result = NonNullable<Optimization["result"]>
type TrialSort = "trial" | "objective" | keyof NonNullable<Trial["metrics"]>

const objectives = ["sharpe", "sortino", "calmar", "total_return", "profit_factor"] as const
const finished = (status: Optimization["status"]) => status !== "queued" && status !== "running"
const trialsPage = 20

interface Range {
  readonly searched: boolean
  readonly min: string
  readonly max: string
  /** An int's step between values; a float's count of values. */
  readonly grain: string
}

/** A search over the program's numeric parameters, each from `min` to `max`: an int by a step, a float in a number of steps. */
const OptimizationForm = ({ client, program, onSubmitted }: {
  client: PromiseClient
  program: Program
  onSubmitted: (optimization: Optimization) => void
}) => {
  const numeric = (program.parameters ?? []).filter((p) => p.kind !== "choice")
  const [ranges, setRanges] = useState<Record<string, Range>>(() =>
    Object.fromEntries(
      numeric.map((p, i) => [p.name, {
        searched: i < 2,
        min: String(p.min),
        max: String(p.max),
        // Three values to start with.
        grain: p.kind === "int" ? String(Math.max(1, Math.ceil((p.max! - p.min!) / 2))) : "3"
      }])
    )
  )
  const { form, set } = useForm({
    symbol: "BTC",
    timeframe: "1h" as Request["timeframe"],
    from: "",
    to: "",
    search: "grid" as Request["search"],
    objective: "sharpe" as (typeof objectives)[number],
    trials: "100",
    walk_forward: false,
    wf_mode: "rolling" as "rolling" | "anchored",
    wf_folds: "3",
    wf_in_sample_bars: "120",
    wf_out_of_sample_bars: "48"
  })
  const { busy, error, run } = useAction()
  const setRange = (name: string, change: Partial<Range>) =>
    setRanges({ ...ranges, [name]: { ...ranges[name]!, ...change } })
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () =>
      onSubmitted(
        await client.optimizations.submit({
          path: { id: program.id },
          payload: {
            symbol: form.symbol,
            timeframe: form.timeframe,
            start: `${form.from}T00:00:00Z`,
            end: `${form.to}T00:00:00Z`,
            search: form.search,
            objective: form.objective,
            budget: { trials: Number(form.trials), seconds: 3600 },
            ...(form.walk_forward
              ? {
                walk_forward: {
                  mode: form.wf_mode,
                  folds: Number(form.wf_folds),
                  in_sample_bars: Number(form.wf_in_sample_bars),
                  out_of_sample_bars: Number(form.wf_out_of_sample_bars)
                }
              }
              : {}),
            space: Object.fromEntries(
              Object.entries(ranges)
                .filter(([, r]) => r.searched)
                .map(([name, r]) => [name, {
                  min: Number(r.min),
                  max: Number(r.max),
                  ...(numeric.find((p) => p.name === name)!.kind === "int"
                    ? { step: Number(r.grain) }
                    : { steps: Number(r.grain) })
                }])
            )
          }
        })
      )
    )
  }
  return (
    <form class="optimize" onSubmit={submit}>
      <Field label="Symbol">
        <input name="opt_symbol" size={8} required value={form.symbol} onInput={set("symbol")} />
      </Field>
      <Field label="Timeframe">
        <select name="opt_timeframe" value={form.timeframe} onChange={set("timeframe")}>
          {timeframes.map((t) => <option>{t}</option>)}
        </select>
      </Field>
      <Field label="From">
        <input name="opt_from" type="date" required value={form.from} onInput={set("from")} />
      </Field>
      <Field label="To">
        <input name="opt_to" type="date" required value={form.to} onInput={set("to")} />
      </Field>
      <Field label="Search">
        <select name="search" value={form.search} onChange={set("search")}>
          <option value="grid">grid</option>
          <option value="random">random</option>
          <option value="tpe">TPE</option>
        </select>
      </Field>
      <Field label="Objective">
        <select name="objective" value={form.objective} onChange={set("objective")}>
          {objectives.map((o) => <option>{o}</option>)}
        </select>
      </Field>
      <Field label="Trials at most">
        <input name="trials" type="number" min="1" value={form.trials} onInput={set("trials")} />
      </Field>
      <fieldset class="space walk-forward">
        <legend>Walk-forward</legend>
        <div class="range">
          <label class="check">
            <input type="checkbox" name="walk_forward" checked={form.walk_forward} onChange={set("walk_forward")} />
            search each fold in sample, test its best out of sample
          </label>
          {form.walk_forward && (
            <>
              <Field label="Windows">
                <select name="wf_mode" value={form.wf_mode} onChange={set("wf_mode")}>
                  <option value="rolling">rolling</option>
                  <option value="anchored">anchored</option>
                </select>
              </Field>
              <Field label="Folds">
                <input name="wf_folds" type="number" min="1" max="20" value={form.wf_folds} onInput={set("wf_folds")} />
              </Field>
              <Field label="In-sample bars">
                <input
                  name="wf_in_sample_bars"
                  type="number"
                  min="10"
                  value={form.wf_in_sample_bars}
                  onInput={set("wf_in_sample_bars")}
                />
              </Field>
              <Field label="Out-of-sample bars">
                <input
                  name="wf_out_of_sample_bars"
                  type="number"
                  min="10"
                  value={form.wf_out_of_sample_bars}
                  onInput={set("wf_out_of_sample_bars")}
                />
              </Field>
            </>
          )}
        </div>
      </fieldset>
      <fieldset class="space">
        <legend>Parameters searched</legend>
        {numeric.map((p) => {
          const r = ranges[p.name]!
          return (
            <div class="range">
              <label class="check">
                <input
                  type="checkbox"
                  name={`search_${p.name}`}
                  checked={r.searched}
                  onChange={(e) => setRange(p.name, { searched: e.currentTarget.checked })}
                />
                {p.name} ({p.kind})
              </label>
              <Field label="Min">
                <input
                  type="number"
                  step="any"
                  name={`${p.name}_min`}
                  value={r.min}
                  onInput={(e) => setRange(p.name, { min: e.currentTarget.value })}
                />
              </Field>
              <Field label="Max">
                <input
                  type="number"
                  step="any"
                  name={`${p.name}_max`}
                  value={r.max}
                  onInput={(e) => setRange(p.name, { max: e.currentTarget.value })}
                />
              </Field>
              <Field label={p.kind === "int" ? "Step" : "Steps"}>
                <input
                  type="number"
                  min="2"
                  name={`${p.name}_grain`}
                  value={r.grain}
                  onInput={(e) => setRange(p.name, { grain: e.currentTarget.value })}
                />
              </Field>
            </div>
          )
        })}
      </fieldset>
      <button type="submit" disabled={busy}>Optimise</button>
      <ErrorText error={error} />
    </form>
  )
}

/** Colour of an objective between the worst and the best seen: red to green, through the page's background. */
const heat = (value: number, low: number, high: number) => {
  const t = high === low ? 1 : (value - low) / (high - low)
  return t < 0.5 ? `rgba(220, 38, 38, ${0.7 * (1 - 2 * t)})` : `rgba(22, 163, 74, ${0.7 * (2 * t - 1)})`
}

/** The best objective at each pair of values of two parameters chosen, as a table of coloured cells. */
const Heatmap = ({ trials, names }: { trials: ReadonlyArray<Trial>; names: ReadonlyArray<string> }) => {
  const [axes, setAxes] = useState<[string, string]>([names[0]!, names[1] ?? names[0]!])
  const scored = trials.filter((t) => t.role === "search" && t.objective !== null)
  const values = (name: string) => [...new Set(scored.map((t) => Number(t.params[name])))].sort((a, b) => a - b)
  const [xs, ys] = [values(axes[0]), values(axes[1])]
  const best = new Map<string, number>()
  for (const t of scored) {
    const key = `${t.params[axes[0]]}|${t.params[axes[1]]}`
    best.set(key, Math.max(best.get(key) ?? -Infinity, t.objective!))
  }
  const all = [...best.values()]
  const [low, high] = [Math.min(...all), Math.max(...all)]
  const axis = (which: 0 | 1, label: string) => (
    <Field label={label}>
      <select
        name={which === 0 ? "heat_x" : "heat_y"}
        value={axes[which]}
        onChange={(e) => setAxes(which === 0 ? [e.currentTarget.value, axes[1]] : [axes[0], e.currentTarget.value])}
      >
        {names.map((n) => <option>{n}</option>)}
      </select>
    </Field>
  )
  return (
    <section class="heatmap">
      <h4>Best objective by two parameters</h4>
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        {axis(0, "Columns")}
        {axis(1, "Rows")}
      </form>
      <div class="scroll">
        <table class="heatmap">
          <thead>
            <tr>
              <th scope="col">{axes[1]} ↓ {axes[0]} →</th>
              {xs.map((x) => <th scope="col">{number(x, 4)}</th>)}
            </tr>
          </thead>
          <tbody>
            {ys.map((y) => (
              <tr>
                <th scope="row">{number(y, 4)}</th>
                {xs.map((x) => {
                  const value = best.get(`${x}|${y}`)
                  return value === undefined
                    ? <td class="muted">–</td>
                    : <td style={{ backgroundColor: heat(value, low, high) }}>{number(value, 3)}</td>
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

const window = (w: { start: string; end: string }) => `${w.start.slice(0, 16)} to ${w.end.slice(0, 16)}`
const params = (p: Readonly<Record<string, unknown>>) =>
  Object.entries(p).map(([name, value]) => `${name} ${String(value)}`).join(", ")

/**
 * A walk-forward's folds: each one's windows, the best point in sample with its figures, and that
 * point's figures out of sample; then the out-of-sample runs chained, as one equity curve, beside
 * the means in and out of sample.
 */
const WalkForwardFolds = ({ result }: { result: Result }) => {
  const curve = useMemo((): ReadonlyArray<Series> => [{
    kind: "line",
    name: "Out-of-sample equity",
    data: byTime(result.equity_curve.map((p) => ({ time: p.time, value: p.equity })))
  }], [result])
  const wf = result.walk_forward
  return (
    <section class="walk-forward">
      <h4>Walk-forward: {result.folds.length} folds</h4>
      <Table
        class="folds"
        headers={[
          "fold",
          "in sample",
          "out of sample",
          "best parameters",
          "objective in",
          "return % in",
          "objective out",
          "return % out",
          "max drawdown % out",
          "trades out"
        ]}
        rows={result.folds.map((f) => [
          f.fold,
          window(f.in_sample),
          window(f.out_of_sample),
          <span class="text">{f.best === null ? "none met the constraints" : params(f.best.params)}</span>,
          number(f.best?.objective, 4),
          number(f.best?.metrics.total_pnl_percent),
          number(f.out_of_sample_objective, 4),
          number(f.out_of_sample_metrics?.total_pnl_percent),
          number(f.out_of_sample_metrics?.max_drawdown_percent),
          f.out_of_sample_metrics?.total_trades ?? "–"
        ])}
      />
      <div class="side-by-side">
        <div>
          <h4>Out-of-sample equity, the folds chained</h4>
          {result.equity_curve.length > 1
            ? <Chart label="Out-of-sample equity of the walk-forward, the folds chained" series={curve} />
            : <p class="muted">No out-of-sample run.</p>}
        </div>
        {wf !== null && (
          <dl class="figures">
            <dt>Return out of sample, chained</dt>
            <dd>{number(wf.out_of_sample_return_percent)} %</dd>
            <dt>Mean objective in sample</dt>
            <dd>{number(wf.in_sample_objective_mean, 4)}</dd>
            <dt>Mean objective out of sample</dt>
            <dd>{number(wf.out_of_sample_objective_mean, 4)}</dd>
          </dl>
        )}
      </div>
    </section>
  )
}

const sortable: ReadonlyArray<[TrialSort, string]> = [
  ["trial", "#"],
  ["objective", "objective"],
  ["sharpe", "Sharpe"],
  ["total_return", "return %"],
  ["max_drawdown_percent", "max drawdown %"],
  ["total_trades", "trades"],
  ["win_rate", "win rate"]
]

/** The trials a page at a time, sorted by the API on the column chosen (again to reverse). */
const Trials = ({ client, optimization, names }: {
  client: PromiseClient
  optimization: Optimization
  names: ReadonlyArray<string>
}) => {
  const [sort, setSort] = useState<{ key: TrialSort; order: "asc" | "desc" }>({ key: "trial", order: "asc" })
  const [offset, setOffset] = useState(0)
  const page = useLoad(() =>
    client.optimizations.trials({
      path: { id: optimization.program_id!, optimization_id: optimization.id },
      urlParams: { sort: sort.key, order: sort.order, limit: trialsPage, offset }
    }), [optimization.id, optimization.status, sort.key, sort.order, offset])
  const by = (key: TrialSort) => {
    setOffset(0)
    setSort({
      key,
      order: key === sort.key && sort.order === "asc"
        ? "desc"
        : key === sort.key
        ? "asc"
        : key === "trial"
        ? "asc"
        : "desc"
    })
  }
  return (
    <section>
      <h4>Trials</h4>
      <ErrorText error={page.error} />
      <div class="scroll">
        <table class="trials-table">
          <thead>
            <tr>
              {sortable.slice(0, 2).map(([key, label]) => (
                <SortHeader sortKey={key} label={label} sort={sort} onSort={by} />
              ))}
              {names.map((n) => <th scope="col">{n}</th>)}
              {sortable.slice(2).map(([key, label]) => (
                <SortHeader sortKey={key} label={label} sort={sort} onSort={by} />
              ))}
              <th scope="col">role</th>
            </tr>
          </thead>
          <tbody>
            {page.value?.trials.map((t) => (
              <tr>
                <td>{t.trial}</td>
                <td>{number(t.objective, 4)}</td>
                {names.map((n) => <td>{String(t.params[n] ?? "–")}</td>)}
                <td>{number(t.metrics?.sharpe, 3)}</td>
                <td>{number(t.metrics?.total_return)}</td>
                <td>{number(t.metrics?.max_drawdown_percent)}</td>
                <td>{t.metrics?.total_trades ?? "–"}</td>
                <td>{t.metrics === null ? "–" : `${number(t.metrics.win_rate * 100, 0)}%`}</td>
                <td class="text">{t.rejected === null ? t.role : `${t.role}, broke ${t.rejected}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page.value !== undefined && page.value.total > trialsPage && (
        <Pager offset={offset} limit={trialsPage} total={page.value.total} onPage={setOffset} />
      )}
    </section>
  )
}

const SortHeader = ({ sortKey, label, sort, onSort }: {
  sortKey: TrialSort
  label: string
  sort: { key: TrialSort; order: "asc" | "desc" }
  onSort: (key: TrialSort) => void
}) => (
  <th
    scope="col"
    data-key={sortKey}
    aria-sort={sortKey === sort.key ? (sort.order === "asc" ? "ascending" : "descending") : "none"}
  >
    <button type="button" onClick={() => onSort(sortKey)}>{label}</button>
  </th>
)

/** One optimisation: its progress while it runs, then its heatmap and its trials. */
const OptimizationResult = ({ client, initial, onDeleted }: {
  client: PromiseClient
  initial: Optimization
  onDeleted: () => void
}) => {
  const [optimization, setOptimization] = useState(initial)
  const [streamError, setStreamError] = useState<string>()
  const programId = initial.program_id!
  useEffect(() => {
    if (finished(initial.status)) return
    let current = true
    // Live from the progress stream (which reconnects by the client's retry rule), then read whole
    // once it ends, for the result.
    const stream = client.optimizationProgress(programId, initial.id)[Symbol.asyncIterator]()
    void (async () => {
      for (let next = await stream.next(); !next.done && current; next = await stream.next()) {
        const { best, error, status, trials_done, trials_total } = next.value
        setOptimization((shown) => ({ ...shown, best, error, status, trials_done, trials_total }))
      }
      const ended = await client.optimizations.get({ path: { id: programId, optimization_id: initial.id } })
      if (current) setOptimization(ended)
    })().catch((error) => current && setStreamError(String(error?.message ?? error)))
    return () => {
      current = false
      void stream.return?.()
    }
  }, [initial.id])
  const names = Object.keys(optimization.request.space)
  const all = useLoad(() =>
    client.optimizations.trials({
      path: { id: programId, optimization_id: optimization.id },
      urlParams: { role: "search", limit: 500 }
    }), [optimization.id, finished(optimization.status)])
  const o = optimization
  return (
    <section class="optimization" data-status={o.status}>
      <h3>Optimisation #{o.id}: {o.request.search} search of {names.join(", ")} by {String(o.request.objective)}</h3>
      <p role="status">
        {o.status}: {o.trials_done} of {o.trials_total} trials
        {o.best === null ? "" : `, best ${number(o.best.objective, 4)} at ${JSON.stringify(o.best.params)}`}
      </p>
      <progress max={Math.max(o.trials_total, 1)} value={o.trials_done} aria-label="Trials done" />
      <DeleteButton
        what="optimisation"
        name={`#${o.id}`}
        onDelete={() => client.optimizations.remove({ path: { id: programId, optimization_id: o.id } }).then(onDeleted)}
      />
      {o.error !== null && <p class="error">{o.error}</p>}
      <ErrorText error={streamError ?? all.error} />
      {o.result !== null && o.result.folds.length > 0 && <WalkForwardFolds result={o.result} />}
      {finished(o.status) && all.value !== undefined && all.value.trials.length > 0 && (
        <Heatmap trials={all.value.trials} names={names} />
      )}
      <Trials client={client} optimization={o} names={names} />
    </section>
  )
}

/** A program's optimisations: a form for a new search, the latest ones, and the one shown. */
export const Optimizations = ({ client, program }: { client: PromiseClient; program: Program }) => {
  const list = useLoad(() => client.optimizations.list({ path: { id: program.id }, urlParams: { limit: 10 } }), [
    program.id
  ])
  const [shown, setShown] = useState<Optimization>()
  if ((program.parameters ?? []).every((p) => p.kind === "choice")) {
    return <p class="muted">The program declares no numeric parameters to optimise (an export `parameters`).</p>
  }
  return (
    <section>
      <OptimizationForm
        client={client}
        program={program}
        onSubmitted={(o) => {
          setShown(o)
          list.reload()
        }}
      />
      <ErrorText error={list.error} />
      {list.value !== undefined && list.value.optimizations.length > 0 && (
        <ul class="inline-list">
          {list.value.optimizations.map((o) => (
            <li>
              <button type="button" aria-current={o.id === shown?.id} onClick={() => setShown(o)}>
                #{o.id} {o.status} ({o.trials_done}/{o.trials_total})
              </button>
            </li>
          ))}
        </ul>
      )}
      {shown !== undefined && (
        <OptimizationResult
          key={shown.id}
          client={client}
          initial={shown}
          onDeleted={() => {
            setShown(undefined)
            list.reload()
          }}
        />
      )}
    </section>
  )
}
