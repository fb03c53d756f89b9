import { useEffect, useRef, useState } from "preact/hooks"
import { type Backtest, BacktestResult } from "./BacktestView.js"
import { Bindings } from "./BindingsView.js"
import {
  DeleteButton,
  ErrorText,
  Field,
  number,
  Table,
  type Timeframe,
  timeframes,
  useAction,
  useForm,
  useLoad,
  wait
} from "./Controls.js"
import { Optimizations } from "./OptimizationView.js"
import { errorLine, type PromiseClient } from "./Session.js"

type Program = Awaited<ReturnType<PromiseClient["programs"]["get"]>>
type ProgramId = Program["id"]

const starter = `// decide(data) is called on every bar; answer an operation.
export function decide(data) {
  return { operation: "hold" }
}
`

/** The code's editor; a compile error's line is selected and named beside the save button. */
const CodeField = ({ code, onCode, failedLine }: {
  code: string
  onCode: (code: string) => void
  failedLine: number | undefined
}) => {
  const ref = useRef<HTMLTextAreaElement>(null)
  useEffect(() => {
    const area = ref.current
    if (failedLine === undefined || area === null) return
    const lines = area.value.split("\n")
    const start = lines.slice(0, failedLine - 1).reduce((sum, line) => sum + line.length + 1, 0)
    area.focus()
    area.setSelectionRange(start, start + (lines[failedLine - 1]?.length ?? 0))
  }, [failedLine])
  return (
    <Field label="Code">
      <textarea
        ref={ref}
        name="code"
        spellcheck={false}
        value={code}
        aria-invalid={failedLine !== undefined}
        onInput={(event) => onCode(event.currentTarget.value)}
      />
    </Field>
  )
}

/** Name and code of a program, saved on submit; a compile error shows the line the API names. */
const ProgramForm = ({ initial, submitLabel, onSubmit }: {
  initial: { name: string; code: string }
  submitLabel: string
  onSubmit: (program: { name: string; code: string }) => Promise<unknown>
}) => {
  const [program, setProgram] = useState(initial)
  const [failed, setFailed] = useState<{ line: number; column?: number }>()
  const [saved, setSaved] = useState(false)
  const { busy, error, run } = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    setFailed(undefined)
    void run(async () => {
      await onSubmit(program)
      setSaved(true)
    }, (failure) => setFailed(errorLine(failure)))
  }
  return (
    <form class="editor" onSubmit={submit}>
      <Field label="Name">
        <input
          name="name"
          required
          value={program.name}
          onInput={(e) => setProgram({ ...program, name: e.currentTarget.value })}
        />
      </Field>
      <CodeField code={program.code} onCode={(code) => setProgram({ ...program, code })} failedLine={failed?.line} />
      <div class="actions">
        <button type="submit" disabled={busy}>{submitLabel}</button>
        {saved && <span role="status">Saved.</span>}
      </div>
      {failed !== undefined && (
        <p class="error compile-line">
          Line {failed.line}
          {failed.column === undefined ? "" : `, column ${failed.column}`}:{" "}
          <code>{program.code.split("\n")[failed.line - 1]}</code>
        </p>
      )}
      <ErrorText error={error} />
    </form>
  )
}

const day = 24 * 3600 * 1000
const isoDay = (millis: number) => new Date(millis).toISOString().slice(0, 10)

/** Runs a backtest of the program with the market and the account's terms chosen, following the job to its end. */
const BacktestForm = ({ client, program, onBacktest }: {
  client: PromiseClient
  program: Program
  onBacktest: (backtest: Backtest) => void
}) => {
  const today = Math.floor(Date.now() / day) * day
  const { form, set } = useForm({
    symbol: "BTC",
    timeframe: "1h" as Timeframe,
    from: isoDay(today - 30 * day),
    to: isoDay(today),
    initial_balance: "10000",
    fee_rate: "0.0005",
    leverage: "1"
  })
  const [progress, setProgress] = useState("")
  const { busy, error, run } = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      let backtest = await client.backtests.submit({
        path: { id: program.id },
        payload: {
          symbol: form.symbol,
          timeframe: form.timeframe,
          start: `${form.from}T00:00:00Z`,
          end: `${form.to}T00:00:00Z`,
          initial_balance: Number(form.initial_balance),
          fee_rate: Number(form.fee_rate),
          leverage: Number(form.leverage)
        }
      })
      while (backtest.status === "queued" || backtest.status === "running") {
        setProgress(`${backtest.status} ${Math.round(backtest.progress * 100)} %`)
        await wait(500)
        backtest = await client.backtests.get({ path: { id: backtest.id } })
      }
      setProgress("")
      onBacktest(backtest)
    })
  }
  return (
    <form class="run" onSubmit={submit}>
      <Field label="Symbol">
        <input name="symbol" size={8} required value={form.symbol} onInput={set("symbol")} />
      </Field>
      <Field label="Timeframe">
        <select name="timeframe" value={form.timeframe} onChange={set("timeframe")}>
          {timeframes.map((t) => <option>{t}</option>)}
        </select>
      </Field>
      <Field label="From">
        <input name="from" type="date" required value={form.from} onInput={set("from")} />
      </Field>
      <Field label="To">
        <input name="to" type="date" required value={form.to} onInput={set("to")} />
      </Field>
      <Field label="Balance">
        <input
          name="initial_balance"
          type="number"
          min="0"
          step="any"
          value={form.initial_balance}
          onInput={set("initial_balance")}
        />
      </Field>
      <Field label="Fee rate">
        <input
          name="fee_rate"
          type="number"
          min="0"
          max="1"
          step="any"
          value={form.fee_rate}
          onInput={set("fee_rate")}
        />
      </Field>
      <Field label="Leverage">
        <input
          name="leverage"
          type="number"
          min="1"
          max="125"
          step="any"
          value={form.leverage}
          onInput={set("leverage")}
        />
      </Field>
      <button type="submit" disabled={busy}>Run backtest</button>
      <span role="status">{progress}</span>
      <ErrorText error={error} />
    </form>
  )
}

const ProgramDetail = ({ client, id, onSaved, onDeleted }: {
  client: PromiseClient
  id: ProgramId
  onSaved: () => void
  onDeleted: () => void
}) => {
  const program = useLoad(() => client.programs.get({ path: { id } }), [id])
  const history = useLoad(() => client.backtests.history({ urlParams: { program_id: id, limit: 20 } }), [id])
  const [shown, setShown] = useState<Backtest>()
  const show = useAction()
  useEffect(() => setShown(undefined), [id])
  if (program.value === undefined) return <ErrorText error={program.error} />
  const p = program.value
  return (
    <div>
      <ProgramForm
        key={p.id}
        initial={{ name: p.name, code: p.code }}
        submitLabel="Save"
        onSubmit={(update) => client.programs.update({ path: { id: p.id }, payload: update }).then(onSaved)}
      />
      <DeleteButton
        what="program"
        name={p.name}
        onDelete={() => client.programs.delete({ path: { id: p.id } }).then(onDeleted)}
      />
      <h3>Bindings to accounts</h3>
      <Bindings client={client} program={p} />
      <h3>Run a backtest</h3>
      <BacktestForm
        client={client}
        program={p}
        onBacktest={(backtest) => {
          setShown(backtest)
          history.reload()
        }}
      />
      {shown !== undefined && <BacktestResult key={shown.id} client={client} backtest={shown} />}
      <h3>Optimise</h3>
      <Optimizations client={client} program={p} />
      <h3>Backtests</h3>
      <ErrorText error={history.error ?? show.error} />
      {history.value !== undefined && (history.value.backtests.length === 0
        ? <p class="muted">None yet.</p>
        : (
          <Table
            headers={["#", "symbol", "timeframe", "status", "PnL", "trades", "created", ""]}
            rows={history.value.backtests.map((b) => [
              b.id,
              b.symbol,
              b.timeframe,
              b.status,
              number(b.total_pnl),
              b.total_trades ?? "–",
              b.created_at.slice(0, 16),
              <button
                type="button"
                onClick={() => void show.run(async () => setShown(await client.backtests.get({ path: { id: b.id } })))}
              >
                Show
              </button>
            ])}
          />
        ))}
    </div>
  )
}

/** The programs: a list, a form for a new one, and the selected one's editor, backtests and results. */
export const ProgramsView = ({ client }: { client: PromiseClient }) => {
  const programs = useLoad(() => client.programs.list(), [])
  const [selected, setSelected] = useState<ProgramId | "new">()
  const list = programs.value?.programs ?? []
  const current = selected ?? list[0]?.id
  return (
    <section>
      <h2>Programs</h2>
      <ErrorText error={programs.error} />
      <div class="columns">
        <ul class="list">
          <li>
            <button type="button" aria-current={current === "new"} onClick={() => setSelected("new")}>
              + New program
            </button>
          </li>
          {list.map((program) => (
            <li>
              <button
                type="button"
                data-id={program.id}
                aria-current={program.id === current}
                onClick={() => setSelected(program.id)}
              >
                {program.name}
              </button>
            </li>
          ))}
        </ul>
        {current === "new"
          ? (
            <div>
              <h3>New program</h3>
              <ProgramForm
                initial={{ name: "", code: starter }}
                submitLabel="Create program"
                onSubmit={async (payload) => {
                  const created = await client.programs.create({ payload })
                  programs.reload()
                  setSelected(created.id)
                }}
              />
            </div>
          )
          : current !== undefined && (
            <ProgramDetail
              client={client}
              id={current}
              onSaved={programs.reload}
              onDeleted={() => {
                setSelected(undefined)
                programs.reload()
              }}
            />
          )}
        {programs.value !== undefined && list.length === 0 && current === undefined && (
          <p class="muted">No programs yet: create one with “New program”.</p>
        )}
      </div>
    </section>
  )
}
