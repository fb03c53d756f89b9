/**
 * The pieces every view uses: a labelled field, an action whose failure shows beside it, a form
 * whose failures show beside the fields they name, a deletion asked twice, data loaded for a view,
 * a table, a pager. Text from the API goes in as text (JSX children), never as HTML, so a name like
 * `<img onerror=...>` shows as typed.
 */
import { TradingApiError } from "@trading-platform/client"
import { Timeframe } from "@trading-platform/client/contract"
import type { ComponentChildren, InputHTMLAttributes } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { describe } from "./Session.js"

export { Timeframe }

/** The timeframes the forms offer, shortest first. */
export const timeframes = Timeframe.literals

/** A form's values, and `set(key)`: the input handler that writes that field from its element's value (a checkbox's: whether it is checked). */
export const useForm = <A extends Record<string, unknown>>(initial: A | (() => A)) => {
  const [form, setForm] = useState(initial)
  const set = (key: keyof A) => (event: Event) => {
    const input = event.currentTarget as HTMLInputElement
    setForm((previous) => ({ ...previous, [key]: input.type === "checkbox" ? input.checked : input.value }))
  }
  return { form, set, setForm }
}

/**
 * The message for each field a failure names: each of the error envelope's `issues` by its path's
 * last field (`payload.trigger_condition.threshold` → `threshold`, `symbols.1` → `symbols`), and
 * the envelope's message for the field `byCode` names for its code (`leverage_too_high` → `max_leverage`).
 */
export const fieldErrors = (failure: unknown, byCode: Readonly<Record<string, string>> = {}) => {
  const errors: Record<string, string> = {}
  if (!(failure instanceof TradingApiError)) return errors
  for (const issue of failure.issues ?? []) {
    const field = issue.path.split(".").filter((part) => part !== "payload" && !/^\d+$/.test(part)).at(-1)
    if (field !== undefined) errors[field] ??= issue.message
  }
  const named = byCode[failure.code]
  if (named !== undefined) errors[named] ??= failure.message
  return errors
}

/**
 * The messages of a failure's `issues` about the values inside the object field `field`, by their
 * name (`params.fast` → `fast`): a program's parameters, which may share a name with a field of the form.
 */
export const issuesUnder = (failure: unknown, field: string) => {
  const errors: Record<string, string> = {}
  if (!(failure instanceof TradingApiError)) return errors
  for (const issue of failure.issues ?? []) {
    const [under, name, ...rest] = issue.path.split(".").filter((part) => part !== "payload")
    if (under === field && name !== undefined && rest.length === 0) errors[name] ??= issue.message
  }
  return errors
}

/**
 * A form's values with the action that sends them: `submit(task)` is the form's submit handler,
 * running `task(values)`; a failure's message shows where the action was (`error`) and beside each
 * field it names (`errors`, see `fieldErrors`).
 */
export const useEditForm = <A extends Record<string, unknown>>(
  initial: A | (() => A),
  byCode?: Readonly<Record<string, string>>
) => {
  const values = useForm(initial)
  const action = useAction()
  const submit = (task: (values: A) => Promise<unknown>) => (event: Event) => {
    event.preventDefault()
    void action.run(() => task(values.form))
  }
  return { ...values, ...action, errors: fieldErrors(action.failure, byCode), submit }
}

/** What the fields of a form read of `useEditForm` (methods, so that any form's values fit). */
export interface EditForm {
  readonly form: Readonly<Record<string, unknown>>
  set(key: string): (event: Event) => void
  setForm(update: (previous: any) => any): void
  readonly errors: Readonly<Record<string, string>>
  readonly error: string | undefined
  readonly busy: boolean
}

/** A text field's value as a number, or null when left empty. */
export const numberOrNull = (text: unknown) => text === "" || text === null || text === undefined ? null : Number(text)
/** A list typed with commas, spaces or new lines. */
export const listOf = (text: unknown) => String(text ?? "").split(/[\s,]+/).filter((item) => item !== "")
/** Symbols typed in a list, upper-cased as the contract has them (`btc, eth` → `BTC`, `ETH`). */
export const symbolsOf = (text: unknown) => listOf(text).map((symbol) => symbol.toUpperCase())

type Bound = { f: EditForm; name: string; label: string }

/** What a control of the form `f` named `name` carries: its name, its value, and whether a failure names it. */
const boundTo = (f: EditForm, name: string) => ({
  name,
  value: f.form[name] as string,
  "aria-invalid": f.errors[name] === undefined ? undefined : true
})

/** An input of the form `f`, labelled, with the message of a failure that names it beside it. */
export const Input = ({ f, name, label, ...attributes }: Bound & InputHTMLAttributes<HTMLInputElement>) => (
  <Field label={label} error={f.errors[name]}>
    <input {...boundTo(f, name)} onInput={f.set(name)} {...attributes} />
  </Field>
)

/** A text area of the form `f`; see `Input`. */
export const TextArea = ({ f, name, label }: Bound) => (
  <Field label={label} error={f.errors[name]}>
    <textarea class="short" {...boundTo(f, name)} onInput={f.set(name)} />
  </Field>
)

/** A choice of the form `f` among `options` (a value, or a value and its text); see `Input`. */
export const Select = ({ f, name, label, options }: Bound & {
  options: ReadonlyArray<string | readonly [string, string]>
}) => (
  <Field label={label} error={f.errors[name]}>
    <select {...boundTo(f, name)} onChange={f.set(name)}>
      {options.map((option) =>
        typeof option === "string" ? <option>{option}</option> : <option value={option[0]}>{option[1]}</option>
      )}
    </select>
  </Field>
)

/** A yes or no of the form `f`; see `Input`. */
export const Check = ({ f, name, label }: Bound) => (
  <Field label={label} error={f.errors[name]} class="check">
    <input type="checkbox" name={name} checked={f.form[name] as boolean} onChange={f.set(name)} />
  </Field>
)

/** Some of `options` (a value and its text), as the form `f`'s array `name`; see `Input`. */
export const Checks = <V extends string | number>({ f, name, label, options }: Bound & {
  options: ReadonlyArray<readonly [V, string]>
}) => {
  const chosen = f.form[name] as ReadonlyArray<V>
  return (
    <fieldset class="checks" aria-invalid={f.errors[name] === undefined ? undefined : true}>
      <legend>{label}</legend>
      {options.length === 0 && <span class="muted">none yet</span>}
      {options.map(([value, text]) => (
        <label class="check">
          <input
            type="checkbox"
            name={name}
            value={String(value)}
            checked={chosen.includes(value)}
            onChange={(event) =>
              f.setForm((previous: Record<string, unknown>) => ({
                ...previous,
                [name]: event.currentTarget.checked
                  ? [...(previous[name] as ReadonlyArray<V>), value]
                  : (previous[name] as ReadonlyArray<V>).filter((v) => v !== value)
              }))}
          />
          {text}
        </label>
      ))}
      <FieldError error={f.errors[name]} />
    </fieldset>
  )
}

/**
 * The form `f` with its fields, its submit button (and a cancel one), and its failure where the
 * action was. Its first field takes the focus when it opens (unless `focus` is false), so that a
 * keyboard goes on from the button that opened it.
 */
export const EditFormShell = ({ f, onSubmit, submitLabel, onCancel, label, children, focus = true }: {
  f: EditForm
  onSubmit: (event: Event) => void
  submitLabel: string
  onCancel?: () => void
  label: string
  children: ComponentChildren
  focus?: boolean
}) => (
  <form class="edit" aria-label={label} onSubmit={onSubmit} ref={focus ? focusFirstField : null}>
    {children}
    <div class="actions">
      <button type="submit" disabled={f.busy}>{submitLabel}</button>
      {onCancel !== undefined && <button type="button" onClick={onCancel}>Cancel</button>}
    </div>
    <ErrorText error={f.error} />
  </form>
)

const focused = new WeakSet<Element>()
const focusFirstField = (form: HTMLFormElement | null) => {
  if (form === null || focused.has(form)) return
  focused.add(form)
  form.querySelector<HTMLElement>("input, select, textarea")?.focus()
}

/** A button that shows what it opens below it (a form to create or edit), until closed. */
export const Disclosure = ({ label, children }: {
  label: string
  children: (close: () => void) => ComponentChildren
}) => {
  const [open, setOpen] = useState(false)
  return (
    <div class="disclosure">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>{label}</button>
      {open && children(() => setOpen(false))}
    </div>
  )
}

/** Deleting `what`, asked twice; the API's refusal shows beside the button. */
export const DeleteButton = ({ what, name, onDelete }: {
  what: string
  name: string
  onDelete: () => Promise<unknown>
}) => {
  const [confirming, setConfirming] = useState(false)
  const remove = useAction()
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => confirm.current?.focus(), [confirming])
  return (
    <span class="actions">
      {confirming
        ? (
          <>
            <button
              ref={confirm}
              type="button"
              class="danger"
              disabled={remove.busy}
              onClick={() => void remove.run(onDelete)}
            >
              Delete {what} {name} for good
            </button>
            <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
          </>
        )
        : <button type="button" onClick={() => setConfirming(true)}>Delete {what}</button>}
      <ErrorText error={remove.error} />
    </span>
  )
}

export const number = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined ? "–" : value.toLocaleString("en-US", { maximumFractionDigits: digits })

/** A failure's message for one field, beside it. */
const FieldError = ({ error }: { error: string | undefined }) =>
  error === undefined ? null : <span class="error field-error" role="alert">{error}</span>

export const Field = ({ label, children, error, class: className }: {
  label: string
  children: ComponentChildren
  error?: string | undefined
  class?: string
}) => (
  <label class={className}>
    {label}
    {children}
    <FieldError error={error} />
  </label>
)

/** A failure, in the API's words, where the action was. */
export const ErrorText = ({ error }: { error: string | undefined }) =>
  error === undefined ? null : <p class="error" role="alert">{error}</p>

/** Runs actions one at a time, keeping the last one's failure (as `describe` reads it) to show beside its control. */
export const useAction = () => {
  const [failure, setFailure] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const run = useCallback(async (task: () => Promise<unknown>, onError?: (error: unknown) => void) => {
    setFailure(undefined)
    setBusy(true)
    try {
      await task()
    } catch (failed) {
      setFailure(failed ?? "failed")
      onError?.(failed)
    } finally {
      setBusy(false)
    }
  }, [])
  return { run, error: failure === undefined ? undefined : describe(failure), failure, busy }
}

/** What `load` answers, loaded again whenever `inputs` change or `reload` is called. */
export const useLoad = <A extends unknown>(load: () => Promise<A>, inputs: ReadonlyArray<unknown>) => {
  const [state, setState] = useState<{ value?: A; error?: string; loading: boolean }>({ loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (value) => current && setState({ value, loading: false }),
      (error) => current && setState({ error: describe(error), loading: false })
    )
    return () => {
      current = false
    }
  }, [...inputs, round])
  return { ...state, reload: useCallback(() => setRound((n) => n + 1), []) }
}

/**
 * A list read `limit` rows at a time: the page on screen with the offset it was read at, kept
 * while the next one loads so that the pager names the rows shown. `goTo` the page asked for
 * already reads it again.
 */
export const usePages = <A extends unknown>(
  load: (page: { readonly limit: number; readonly offset: number }) => Promise<A>,
  limit: number,
  inputs: ReadonlyArray<unknown>
) => {
  const [asked, setAsked] = useState(0)
  const pages = useLoad(() => load({ limit, offset: asked }).then((value) => ({ value, offset: asked })), [
    ...inputs,
    asked
  ])
  const goTo = (offset: number) => offset === asked ? pages.reload() : setAsked(offset)
  return { ...pages, value: pages.value?.value, offset: pages.value?.offset ?? asked, goTo }
}

export const Table = ({ headers, rows, class: className }: {
  headers: ReadonlyArray<string>
  rows: ReadonlyArray<ReadonlyArray<ComponentChildren>>
  class?: string
}) => (
  <div class="scroll">
    <table class={className}>
      <thead>
        <tr>{headers.map((header) => <th scope="col">{header}</th>)}</tr>
      </thead>
      <tbody>{rows.map((row) => <tr>{row.map((cell) => <td>{cell}</td>)}</tr>)}</tbody>
    </table>
  </div>
)

/**
 * Previous and next buttons over `total` rows shown `limit` at a time from `offset`; without a
 * total (a list that does not count), `shown` rows are on this page and a full page may have more.
 */
export const Pager = ({ limit, offset, onPage, shown, total }: {
  offset: number
  limit: number
  total?: number
  shown?: number
  onPage: (offset: number) => void
}) => {
  const end = total === undefined ? offset + (shown ?? 0) : Math.min(offset + limit, total)
  const more = total === undefined ? shown === limit : offset + limit < total
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>
        {end === offset ? 0 : offset + 1}–{end}
        {total === undefined ? "" : ` of ${total}`}
      </span>
      <button type="button" disabled={!more} onClick={() => onPage(offset + limit)}>
        Next
      </button>
    </nav>
  )
}

/** Edit and delete buttons of a row; the button's name says which (`Edit pool majors`). */
export const RowActions = ({ what, name, onEdit, onDelete }: {
  what: string
  name: string
  onEdit: () => void
  onDelete: () => Promise<unknown>
}) => (
  <span class="row-actions">
    <button type="button" aria-label={`Edit ${what} ${name}`} onClick={onEdit}>Edit</button>
    <DeleteButton what={what} name={name} onDelete={onDelete} />
  </span>
)

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A job's statuses once it has ended. */
export const finished = (status: string) => status === "completed" || status === "failed" || status === "cancelled"

/**
 * Follows a job shown by a view: while it has not finished, reads it again every second and hands
 * each read to `set` (a failed read is tried again a second later), until the view leaves or shows
 * another job.
 */
export const useFollow = <A extends { readonly id: unknown; readonly status: string }>(
  job: A | undefined,
  read: (id: A["id"]) => Promise<A>,
  set: (job: A) => void
) => {
  const id = job?.id
  const running = job !== undefined && !finished(job.status)
  useEffect(() => {
    if (id === undefined || !running) return
    let current = true
    void (async () => {
      while (current) {
        await wait(1000)
        const next = await read(id).catch(() => undefined)
        if (!current) return
        if (next !== undefined) set(next)
        if (next !== undefined && finished(next.status)) return
      }
    })()
    return () => {
      current = false
    }
  }, [id, running])
}
