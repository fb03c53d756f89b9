import { useEffect, useState } from "preact/hooks"
import { type Backtest, BacktestResult } from "./BacktestView.js"
import { BiasChecks } from "./BiasChecksView.js"
import { Bindings } from "./BindingsView.js"
import { CodeEditor, type CodeError, type Language, languageOf } from "./CodeEditor.js"
import {
  DeleteButton,
  type EditForm,
  ErrorText,
  Field,
  fieldErrors,
  Input,
  issuesUnder,
  number,
  Select,
  Table,
  type Timeframe,
  timeframes,
  useAction,
  useEditForm,
  useLoad,
  wait
} from "./Controls.js"
import { Optimizations } from "./OptimizationView.js"
import { describe, errorLine, type PromiseClient } from "./Session.js"

type Program = Awaited<ReturnType<PromiseClient["programs"]["get"]>>
type ProgramId = Program["id"]

const starter = `// decide(data) is called on every bar; answer an operation.
export function decide(data) {
  return { operation: "hold" }
}
`

type ProgramFields = { name: string; code: string; language: Language }

/** Name, language and code of a program, saved on submit; a compile error is marked at the line the API names. */
const ProgramForm = ({ initial, submitLabel, onSubmit }: {
  initial: ProgramFields
  submitLabel: string
  onSubmit: (program: ProgramFields) => Promise<unknown>
}) => {
  const [program, setProgram] = useState(initial)
  const [failed, setFailed] = useState<CodeError>()
  const [saved, setSaved] = useState(false)
  const { busy, error, run } = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    setFailed(undefined)
    void run(async () => {
      await onSubmit(program)
      setSaved(true)
    }, (failure) => {
      const at = errorLine(failure)
      setFailed(at === undefined ? undefined : { ...at, message: describe(failure) })
    })
  }
  return (
    <form class="editor" onSubmit={submit}>
      <div class="fields">
        <Field label="Name">
          <input
            name="name"
            required
            value={program.name}
            onInput={(e) => setProgram({ ...program, name: e.currentTarget.value })}
          />
        </Field>
        <Field label="Language">
          <select
            name="language"
            value={program.language}
            onChange={(e) => setProgram({ ...program, language: e.currentTarget.value as Language })}
          >
            <option value="javascript">JavaScript</option>
            <option value="typescript">TypeScript</option>
          </select>
        </Field>
      </div>
      <CodeEditor
        label="Code"
        code={program.code}
        language={program.language}
        onCode={(code) => setProgram((previous) => ({ ...previous, code }))}
        error={failed}
      />
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
const running = (status: Backtest["status"]) => status === "queued" || status === "running"

type Parameter = NonNullable<Program["parameters"]>[number]

/** A declared parameter's range or choices, as the table and its field's label show it. */
const rangeOf = (p: Parameter) => p.kind === "choice" ? p.choices!.map(String).join(" | ") : `${p.min} to ${p.max}`

/** The parameters the program declares (its export `parameters`). */
const ParametersTable = ({ parameters }: { parameters: ReadonlyArray<Parameter> }) => (
  <Table
    class="parameters"
    headers={["parameter", "kind", "range or choices", "default"]}
    rows={parameters.map((p) => [p.name, p.kind, rangeOf(p), String(p.default)])}
  />
)

/** The form's key of a parameter's field, apart from the form's own fields. */
const paramKey = (name: string) => `param_${name}`

/**
 * The values typed for the declared parameters, as `params`: a number for an `int` or `float`
 * (left empty, its default), a choice by its index. The API checks them (400 naming the parameter).
 */
const paramsOf = (parameters: ReadonlyArray<Parameter>, form: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(parameters.flatMap((p): Array<[string, unknown]> => {
    const typed = String(form[paramKey(p.name)] ?? "")
    if (typed === "") return []
    return [[p.name, p.kind === "choice" ? p.choices![Number(typed)] : Number(typed)]]
  }))

/** A field per declared parameter, each with the API's message about it beside it. */
const ParameterFields = ({ f, parameters }: { f: EditForm; parameters: ReadonlyArray<Parameter> }) => (
  <fieldset class="checks params">
    <legend>Parameters (empty: the default)</legend>
    {parameters.map((p) =>
      p.kind === "choice"
        ? (
          <Select
            f={f}
            name={paramKey(p.name)}
            label={p.name}
            options={p.choices!.map((choice, i) => [String(i), String(choice)] as const)}
          />
        )
        : (
          // No min, max or step of the browser's own: the API checks the value and says what is wrong.
          <Input
            f={f}
            name={paramKey(p.name)}
            label={`${p.name} (${rangeOf(p)})`}
            type="number"
            step="any"
            placeholder={String(p.default)}
          />
        )
    )}
  </fieldset>
)

/**
 * Runs a backtest of the program with the market, the account's terms and the parameters chosen,
 * following the job to its end (it can be cancelled meanwhile); or checks the program for bias on
 * the same market and parameters.
 */
const BacktestForm = ({ client, program, onBacktest, onChecked }: {
  client: PromiseClient
  program: Program
  onBacktest: (backtest: Backtest) => void
  onChecked: () => void
}) => {
  const parameters = program.parameters ?? []
  const today = Math.floor(Date.now() / day) * day
  const f = useEditForm<Record<string, string>>(() => ({
    symbol: "BTC",
    timeframe: "1h",
    from: isoDay(today - 30 * day),
    to: isoDay(today),
    initial_balance: "10000",
    fee_rate: "0.0005",
    leverage: "1",
    ...Object.fromEntries(
      parameters.map((p) => [paramKey(p.name), p.kind === "choice" ? String(p.choices!.indexOf(p.default)) : ""])
    )
  }), { leverage_too_high: "leverage", symbol_not_listed: "symbol" })
  const [job, setJob] = useState<Backtest>()
  const cancel = useAction()
  const check = useAction()
  const market = (form: Readonly<Record<string, string>>) => ({
    symbol: form.symbol!,
    timeframe: form.timeframe as Timeframe,
    start: `${form.from}T00:00:00Z`,
    end: `${form.to}T00:00:00Z`,
    params: paramsOf(parameters, form)
  })
  // A failure names the fields of either action; the parameters' beside their own fields.
  const failure = f.failure ?? check.failure
  const named = fieldErrors(failure, { leverage_too_high: "leverage", symbol_not_listed: "symbol" })
  const errors = {
    ...named,
    // The range's ends, as the form's fields are named.
    ...(named.start === undefined ? {} : { from: named.start }),
    ...(named.end === undefined ? {} : { to: named.end }),
    ...Object.fromEntries(Object.entries(issuesUnder(failure, "params")).map(([name, m]) => [paramKey(name), m]))
  }
  const form = { ...f, errors }
  const submit = f.submit(async (values) => {
    let backtest = await client.backtests.submit({
      path: { id: program.id },
      payload: {
        ...market(values),
        initial_balance: Number(values.initial_balance),
        fee_rate: Number(values.fee_rate),
        leverage: Number(values.leverage)
      }
    })
    while (running(backtest.status)) {
      setJob(backtest)
      await wait(500)
      backtest = await client.backtests.get({ path: { id: backtest.id } })
    }
    setJob(undefined)
    onBacktest(backtest)
  })
  return (
    <form class="run" aria-label="Run a backtest" onSubmit={submit}>
      <Input f={form} name="symbol" label="Symbol" size={8} required />
      <Select f={form} name="timeframe" label="Timeframe" options={timeframes} />
      <Input f={form} name="from" label="From" type="date" required />
      <Input f={form} name="to" label="To" type="date" required />
      <Input f={form} name="initial_balance" label="Balance" type="number" min="0" step="any" />
      <Input f={form} name="fee_rate" label="Fee rate" type="number" min="0" max="1" step="any" />
      <Input f={form} name="leverage" label="Leverage" type="number" min="1" max="125" step="any" />
      {parameters.length > 0 && <ParameterFields f={form} parameters={parameters} />}
      <div class="actions">
        <button type="submit" disabled={f.busy}>Run backtest</button>
        <button
          type="button"
          disabled={check.busy}
          onClick={() =>
            void check.run(async () => {
              await client.biasChecks.submit({ path: { id: program.id }, payload: market(f.form) })
              onChecked()
            })}
        >
          Check for bias
        </button>
        <span role="status">{job === undefined ? "" : `${job.status} ${Math.round(job.progress * 100)} %`}</span>
        {job !== undefined && (
          <button
            type="button"
            disabled={cancel.busy}
            onClick={() => void cancel.run(() => client.backtests.cancel({ path: { id: job.id } }))}
          >
            Cancel backtest
          </button>
        )}
      </div>
      <ErrorText error={f.error ?? check.error ?? cancel.error} />
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
  const [checks, setChecks] = useState(0)
  const show = useAction()
  useEffect(() => setShown(undefined), [id])
  if (program.value === undefined) return <ErrorText error={program.error} />
  const p = program.value
  return (
    <div>
      <ProgramForm
        key={p.id}
        initial={{ name: p.name, code: p.code, language: languageOf(p.language) }}
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
      <h3>Parameters</h3>
      {p.parameters === null
        ? <p class="muted">The program declares no parameters (an export `parameters`); it takes any.</p>
        : <ParametersTable parameters={p.parameters} />}
      <h3>Run a backtest</h3>
      <BacktestForm
        client={client}
        program={p}
        onBacktest={(backtest) => {
          setShown(backtest)
          history.reload()
        }}
        onChecked={() => setChecks((n) => n + 1)}
      />
      <BiasChecks client={client} program={p} round={checks} />
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
              <span class="row-actions">
                <button
                  type="button"
                  onClick={() =>
                    void show.run(async () => setShown(await client.backtests.get({ path: { id: b.id } })))}
                >
                  Show
                </button>
                {running(b.status) && (
                  <button
                    type="button"
                    aria-label={`Cancel backtest ${b.id}`}
                    onClick={() =>
                      void show.run(async () => {
                        await client.backtests.cancel({ path: { id: b.id } })
                        history.reload()
                      })}
                  >
                    Cancel
                  </button>
                )}
              </span>
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
                initial={{ name: "", code: starter, language: "javascript" }}
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
