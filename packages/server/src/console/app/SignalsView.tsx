import { Exchange, Metric, Operator } from "@trading-platform/client/contract"
import { useEffect, useState } from "preact/hooks"
import {
  Check,
  Checks,
  Disclosure,
  EditFormShell,
  ErrorText,
  Input,
  listOf,
  number,
  numberOrNull,
  RowActions,
  Select,
  symbolsOf,
  Table,
  TextArea,
  timeframes,
  useEditForm,
  useLoad
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Listing = Awaited<ReturnType<PromiseClient["signals"]["list"]>>
type Signal = Listing["signals"][number]
type Pool = Listing["pools"][number]

const exchanges = Exchange.literals
const metrics = Metric.literals
const operators = Operator.literals

/** A new signal, or a signal to replace: a metric over a window compared with a threshold. */
const SignalForm = ({ client, signal, onDone }: { client: PromiseClient; signal?: Signal; onDone: () => void }) => {
  const condition = signal?.trigger_condition
  const f = useEditForm({
    signal_name: signal?.signal_name ?? "",
    exchange: signal?.exchange ?? "venue1",
    metric: condition?.metric ?? "price_change",
    operator: condition?.operator ?? "gt",
    threshold: condition === undefined ? "" : String(condition.threshold),
    time_window: condition?.time_window ?? "1h",
    description: signal?.description ?? "",
    enabled: signal?.enabled ?? true
  }, { exchange_mismatch: "exchange" })
  const save = (v: typeof f.form) => {
    const payload = {
      signal_name: v.signal_name,
      exchange: v.exchange,
      trigger_condition: {
        metric: v.metric,
        operator: v.operator,
        threshold: numberOrNull(v.threshold) as number,
        time_window: v.time_window
      },
      description: v.description === "" ? null : v.description,
      enabled: v.enabled
    }
    return signal === undefined
      ? client.signals.create({ payload })
      : client.signals.update({ path: { id: signal.id }, payload })
  }
  return (
    <EditFormShell
      f={f}
      label={signal === undefined ? "New signal" : `Edit ${signal.signal_name}`}
      submitLabel={signal === undefined ? "Create signal" : "Save signal"}
      onSubmit={f.submit((v) => save(v).then(onDone))}
      onCancel={onDone}
    >
      <Input f={f} name="signal_name" label="Name" required />
      <Select f={f} name="exchange" label="Venue" options={exchanges} />
      <Select f={f} name="metric" label="Metric" options={metrics} />
      <Select f={f} name="operator" label="Operator" options={operators} />
      <Input f={f} name="threshold" label="Threshold" type="number" step="any" />
      <Select f={f} name="time_window" label="Window" options={timeframes} />
      <TextArea f={f} name="description" label="Description" />
      <Check f={f} name="enabled" label="Enabled" />
    </EditFormShell>
  )
}

/** A new pool, or a pool to change: its signals (or wallets) over its symbols, combined by AND or OR. */
const PoolForm = ({ client, pool, signals, onDone }: {
  client: PromiseClient
  pool?: Pool
  signals: ReadonlyArray<Signal>
  onDone: () => void
}) => {
  const f = useEditForm({
    pool_name: pool?.pool_name ?? "",
    exchange: pool?.exchange ?? "venue1",
    source_type: pool?.source_type ?? "market_signals",
    signal_ids: pool?.signal_ids ?? [],
    symbols: pool?.symbols.join(", ") ?? "",
    logic: pool?.logic ?? "AND",
    addresses: pool?.source_config.addresses?.join("\n") ?? "",
    size_change_threshold: String(pool?.source_config.size_change_threshold ?? ""),
    enabled: pool?.enabled ?? true
  }, { symbol_not_listed: "symbols", exchange_mismatch: "exchange" })
  const save = (v: typeof f.form) => {
    const threshold = numberOrNull(v.size_change_threshold)
    const payload = {
      pool_name: v.pool_name,
      exchange: v.exchange,
      source_type: v.source_type,
      signal_ids: v.signal_ids,
      symbols: symbolsOf(v.symbols),
      logic: v.logic,
      source_config: {
        ...(v.addresses === "" ? {} : { addresses: listOf(v.addresses) }),
        ...(threshold === null ? {} : { size_change_threshold: threshold })
      },
      enabled: v.enabled
    }
    return pool === undefined
      ? client.signals.createPool({ payload })
      : client.signals.updatePool({ path: { id: pool.id }, payload })
  }
  return (
    <EditFormShell
      f={f}
      label={pool === undefined ? "New pool" : `Edit ${pool.pool_name}`}
      submitLabel={pool === undefined ? "Create pool" : "Save pool"}
      onSubmit={f.submit((v) => save(v).then(onDone))}
      onCancel={onDone}
    >
      <Input f={f} name="pool_name" label="Name" required />
      <Select f={f} name="exchange" label="Venue" options={exchanges} />
      <Select f={f} name="source_type" label="Source" options={["market_signals", "wallet_tracking"]} />
      <Input f={f} name="symbols" label="Symbols" />
      <Select f={f} name="logic" label="Logic" options={["AND", "OR"]} />
      <Checks f={f} name="signal_ids" label="Signals" options={signals.map((s) => [s.id, s.signal_name] as const)} />
      {f.form.source_type === "wallet_tracking" && (
        <>
          <TextArea f={f} name="addresses" label="Wallet addresses" />
          <Input f={f} name="size_change_threshold" label="Size change that counts" type="number" step="any" />
        </>
      )}
      <Check f={f} name="enabled" label="Enabled" />
    </EditFormShell>
  )
}

interface Trigger {
  readonly fired_at: string
  readonly pool_name: string
  readonly symbol: string
  readonly values: ReadonlyArray<{ readonly signal_name: string; readonly value: number }>
}

/**
 * The signals and the signal pools, each with the forms to create, change and delete them, and the
 * latest triggers; new ones arrive live over the market-intelligence stream.
 */
export const SignalsView = ({ client }: { client: PromiseClient }) => {
  const listing = useLoad(() => client.signals.list(), [])
  const [editing, setEditing] = useState<{ signal: Signal } | { pool: Pool }>()
  const signals = listing.value?.signals ?? []
  const done = () => {
    setEditing(undefined)
    listing.reload()
  }
  const recent = useLoad(() => client.signals.triggers({ urlParams: { limit: 20 } }), [])
  const [live, setLive] = useState<ReadonlyArray<Trigger>>([])
  const [streamError, setStreamError] = useState<string>()
  const symbols = [...new Set(listing.value?.pools.flatMap((p) => p.symbols) ?? [])]
  useEffect(() => {
    if (symbols.length === 0) return
    // The stream's snapshot repeats the recent triggers; its updates bring each new one as it fires.
    const stream = client.marketIntelligence(symbols.slice(0, 50))[Symbol.asyncIterator]()
    let current = true
    void (async () => {
      for (let next = await stream.next(); !next.done && current; next = await stream.next()) {
        const event = next.value as { event: string; data: { kind?: string; trigger?: Trigger } }
        if (event.event === "update" && event.data.kind === "trigger") {
          const trigger = event.data.trigger!
          setLive((previous) => [trigger, ...previous])
        }
      }
    })().catch((error) => current && setStreamError(String(error?.message ?? error)))
    return () => {
      current = false
      void stream.return?.()
    }
  }, [symbols.join(",")])
  const triggers = [...live, ...(recent.value?.triggers ?? [])]
  const named = (ids: ReadonlyArray<number>) =>
    ids.map((id) => signals.find((s) => s.id === id)?.signal_name ?? `#${id}`).join(", ")
  return (
    <section>
      <h2>Signals</h2>
      <ErrorText error={listing.error} />
      <Disclosure label="New signal">
        {(close) => <SignalForm client={client} onDone={() => (close(), done())} />}
      </Disclosure>
      {listing.value !== undefined && (signals.length === 0
        ? <p class="muted">No signals yet.</p>
        : (
          <Table
            class="signals"
            headers={["signal", "venue", "condition", "enabled", ""]}
            rows={signals.map((s) => [
              s.signal_name,
              s.exchange,
              `${s.trigger_condition.metric} ${s.trigger_condition.operator} ${s.trigger_condition.threshold} over ${s.trigger_condition.time_window}`,
              String(s.enabled),
              <RowActions
                what="signal"
                name={s.signal_name}
                onEdit={() => setEditing({ signal: s })}
                onDelete={() => client.signals.delete({ path: { id: s.id } }).then(done)}
              />
            ])}
          />
        ))}
      {editing !== undefined && "signal" in editing && (
        <SignalForm key={editing.signal.id} client={client} signal={editing.signal} onDone={done} />
      )}
      <h2>Signal pools</h2>
      <Disclosure label="New pool">
        {(close) => <PoolForm client={client} signals={signals} onDone={() => (close(), done())} />}
      </Disclosure>
      {listing.value !== undefined && (listing.value.pools.length === 0
        ? <p class="muted">No signal pools yet.</p>
        : (
          <Table
            class="pools"
            headers={["pool", "venue", "source", "symbols", "signals", "logic", "enabled", ""]}
            rows={listing.value.pools.map((p) => [
              p.pool_name,
              p.exchange,
              p.source_type,
              p.symbols.join(", "),
              named(p.signal_ids),
              p.logic,
              String(p.enabled),
              <RowActions
                what="pool"
                name={p.pool_name}
                onEdit={() => setEditing({ pool: p })}
                onDelete={() => client.signals.deletePool({ path: { id: p.id } }).then(done)}
              />
            ])}
          />
        ))}
      {editing !== undefined && "pool" in editing && (
        <PoolForm key={editing.pool.id} client={client} pool={editing.pool} signals={signals} onDone={done} />
      )}
      <h3>Latest triggers</h3>
      {symbols.length > 0 && <p class="muted">Live: new triggers appear here as they fire.</p>}
      <ErrorText error={recent.error ?? streamError} />
      <Table
        class="triggers"
        headers={["fired", "pool", "symbol", "values"]}
        rows={triggers.map((t) => [
          t.fired_at,
          t.pool_name,
          t.symbol,
          t.values.map((v) => `${v.signal_name}: ${number(v.value, 4)}`).join(", ")
        ])}
      />
    </section>
  )
}
