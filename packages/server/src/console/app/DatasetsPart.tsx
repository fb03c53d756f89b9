/**
 * The caller's imported candle datasets (`/api/market/datasets`): the list, an import of a CSV or
 * zip file with the rows refused reported by line, deletion; and a sync of a venue's candles into
 * the store, which can be cancelled while it runs.
 */
import { useRef, useState } from "preact/hooks"
import {
  DeleteButton,
  Disclosure,
  EditFormShell,
  ErrorText,
  Field,
  finished,
  Input,
  number,
  Pager,
  Select,
  Table,
  timeframes,
  useAction,
  useEditForm,
  useFollow,
  useLoad
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type ImportResult = Awaited<ReturnType<PromiseClient["market"]["importCandles"]>>
type Sync = Awaited<ReturnType<PromiseClient["market"]["candleSync"]>>

const venues = ["venue1", "venue2"] as const
const pageSize = 20

/** What an import kept and refused; each refused row by its line (and file, in a zip), 20 to a page. */
const ImportReport = ({ result }: { result: ImportResult }) => {
  const [offset, setOffset] = useState(0)
  return (
    <div class="import-report" role="status">
      <p>
        {result.imported} rows imported into {result.dataset.name}, {result.rejected} refused
        {result.rejected > result.problems.length ? ` (the first ${result.problems.length} listed)` : ""}
      </p>
      {result.problems.length > 0 && (
        <>
          <Table
            class="problems"
            headers={["Line", "File", "Problem"]}
            rows={result.problems.slice(offset, offset + pageSize).map((p) => [
              p.line,
              p.file ?? "",
              <span class="text">{p.message}</span>
            ])}
          />
          {result.problems.length > pageSize && (
            <Pager limit={pageSize} offset={offset} total={result.problems.length} onPage={setOffset} />
          )}
        </>
      )}
    </div>
  )
}

/** A candle file into a dataset (created by its first import). */
const ImportForm = ({ client, onDone }: { client: PromiseClient; onDone: () => void }) => {
  const f = useEditForm({ name: "", venue: "venue1", symbol: "BTC", timeframe: "1h" })
  const file = useRef<HTMLInputElement>(null)
  const [result, setResult] = useState<ImportResult>()
  return (
    <>
      <EditFormShell
        f={f}
        label="Import candles"
        submitLabel="Import"
        onSubmit={f.submit(async (values) => {
          setResult(undefined)
          const chosen = file.current?.files?.[0]
          if (chosen === undefined) throw new Error("Choose a CSV or zip file to import")
          const imported = await client.market.importCandles({
            urlParams: {
              name: values.name,
              venue: values.venue as (typeof venues)[number],
              symbol: values.symbol.trim().toUpperCase(),
              timeframe: values.timeframe as (typeof timeframes)[number]
            },
            payload: new Uint8Array(await chosen.arrayBuffer())
          })
          setResult(imported)
          onDone()
        })}
      >
        <Input f={f} name="name" label="Dataset name" required maxLength={64} />
        <Select f={f} name="venue" label="Venue rules" options={venues} />
        <Input f={f} name="symbol" label="Symbol" required size={10} />
        <Select f={f} name="timeframe" label="Timeframe" options={timeframes} />
        <Field label="CSV or zip file" error={f.errors.file}>
          <input ref={file} type="file" name="file" required accept=".csv,.zip,text/csv,application/zip" />
        </Field>
      </EditFormShell>
      {result !== undefined && <ImportReport result={result} />}
    </>
  )
}

/** A sync of a venue's candles into the store, followed until it ends; cancelled while it runs. */
const SyncPart = ({ client }: { client: PromiseClient }) => {
  const day = 86_400_000
  const f = useEditForm(() => ({
    exchange: "venue2",
    symbol: "BTC",
    timeframe: "1h",
    from: new Date(Date.now() - 30 * day).toISOString().slice(0, 10),
    to: new Date().toISOString().slice(0, 10)
  }))
  const [sync, setSync] = useState<Sync>()
  const cancel = useAction()
  const running = sync !== undefined && !finished(sync.status)
  useFollow(sync, (id) => client.market.candleSync({ path: { id } }), setSync)
  return (
    <>
      <EditFormShell
        f={f}
        label="Sync candles"
        submitLabel="Start sync"
        focus={false}
        onSubmit={f.submit(async (v) =>
          setSync(
            await client.market.syncCandles({
              payload: {
                exchange: v.exchange as (typeof venues)[number],
                symbol: v.symbol.trim().toUpperCase(),
                timeframe: v.timeframe as (typeof timeframes)[number],
                from: new Date(v.from).toISOString(),
                to: new Date(v.to).toISOString()
              }
            })
          )
        )}
      >
        <Select f={f} name="exchange" label="Venue" options={venues} />
        <Input f={f} name="symbol" label="Symbol" required size={10} />
        <Select f={f} name="timeframe" label="Timeframe" options={timeframes} />
        <Input f={f} name="from" label="From" type="date" required />
        <Input f={f} name="to" label="To" type="date" required />
      </EditFormShell>
      {sync !== undefined && (
        <div class="actions sync" role="status">
          <span>
            Sync #{sync.id} of {sync.symbol} {sync.timeframe} on {sync.exchange}: {sync.status},{" "}
            {number(sync.progress * 100, 0)}%
            {sync.result === null ? "" : `, ${sync.result.bars} bars stored`}
            {sync.error === null ? "" : `: ${sync.error}`}
          </span>
          {running && (
            <button
              type="button"
              disabled={cancel.busy}
              onClick={() =>
                void cancel.run(async () => setSync(await client.market.cancelCandleSync({ path: { id: sync.id } })))}
            >
              Cancel sync
            </button>
          )}
          <ErrorText error={cancel.error} />
        </div>
      )}
    </>
  )
}

export const DatasetsPart = ({ client }: { client: PromiseClient }) => {
  const datasets = useLoad(() => client.market.datasets(), [])
  const [offset, setOffset] = useState(0)
  const list = datasets.value?.datasets ?? []
  return (
    <>
      <h3>Imported datasets</h3>
      <p class="muted">
        A dataset is market data of your own: programs and backtests read it as the exchange <code>dataset:NAME</code>.
      </p>
      <Disclosure label="Import candles">{() => <ImportForm client={client} onDone={datasets.reload} />}</Disclosure>
      <ErrorText error={datasets.error} />
      {datasets.value !== undefined && (list.length === 0
        ? <p class="muted">No datasets yet.</p>
        : (
          <>
            <Table
              class="datasets"
              headers={["Name", "Venue", "Symbol", "Timeframe", "Bars", "First", "Last", ""]}
              rows={list.slice(offset, offset + pageSize).map((d) => [
                d.name,
                d.venue,
                d.symbol,
                d.timeframe,
                d.bars,
                d.first ?? "–",
                d.last ?? "–",
                <DeleteButton
                  what="dataset"
                  name={d.name}
                  onDelete={() => client.market.removeDataset({ path: { id: d.id } }).then(datasets.reload)}
                />
              ])}
            />
            {list.length > pageSize && (
              <Pager limit={pageSize} offset={offset} total={list.length} onPage={setOffset} />
            )}
          </>
        ))}
      <h3>Candle syncs</h3>
      <p class="muted">Fetches a venue's candles of a range into the store, resuming where a sync stopped.</p>
      <Disclosure label="Sync candles">{() => <SyncPart client={client} />}</Disclosure>
    </>
  )
}
