/**
 * The pieces every view uses: a labelled field, an action whose failure shows beside it, data
 * loaded for a view, a table, a pager. Text from the API goes in as text (JSX children), never as
 * HTML, so a name like `<img onerror=...>` shows as typed.
 */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { describe, type PromiseClient } from "./Session.js"

export type Timeframe = Awaited<ReturnType<PromiseClient["market"]["klines"]>>["timeframe"]

/** The timeframes the forms offer, shortest first. */
export const timeframes: ReadonlyArray<Timeframe> = ["1m", "5m", "15m", "30m", "1h", "4h", "1d"]

/** A form's values, and `set(key)`: the input handler that writes that field from its element's value. */
export const useForm = <A extends Record<string, unknown>>(initial: A | (() => A)) => {
  const [form, setForm] = useState(initial)
  const set = (key: keyof A) => (event: Event) =>
    setForm({ ...form, [key]: (event.currentTarget as HTMLInputElement).value })
  return { form, set, setForm }
}

export const number = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined ? "–" : value.toLocaleString("en-US", { maximumFractionDigits: digits })

export const Field = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <label>
    {label}
    {children}
  </label>
)

/** A failure, in the API's words, where the action was. */
export const ErrorText = ({ error }: { error: string | undefined }) =>
  error === undefined ? null : <p class="error" role="alert">{error}</p>

/** Runs actions one at a time, keeping the last one's failure (as `describe` reads it) to show beside its control. */
export const useAction = () => {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const run = useCallback(async (task: () => Promise<unknown>, onError?: (error: unknown) => void) => {
    setError(undefined)
    setBusy(true)
    try {
      await task()
    } catch (failure) {
      setError(describe(failure))
      onError?.(failure)
    } finally {
      setBusy(false)
    }
  }, [])
  return { run, error, busy }
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

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
