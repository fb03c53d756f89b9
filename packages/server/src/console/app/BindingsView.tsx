import { useState } from "preact/hooks"
import {
  Check,
  Checks,
  Disclosure,
  EditFormShell,
  ErrorText,
  Input,
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

type Program = Awaited<ReturnType<PromiseClient["programs"]["get"]>>
type Binding = Awaited<ReturnType<PromiseClient["automation"]["get"]>>
type Account = Awaited<ReturnType<PromiseClient["accounts"]["list"]>>[number]
type Pool = Awaited<ReturnType<PromiseClient["signals"]["list"]>>["pools"][number]

/**
 * A new binding of the program to an account, or a binding to change: its symbols, its schedule
 * and/or signal pools, its leverage and the program's parameters (JSON).
 */
const BindingForm = ({ client, program, binding, accounts, pools, onDone }: {
  client: PromiseClient
  program: Program
  binding?: Binding
  accounts: ReadonlyArray<Account>
  pools: ReadonlyArray<Pool>
  onDone: () => void
}) => {
  const f = useEditForm({
    account_id: String(binding?.account_id ?? accounts[0]?.id ?? ""),
    symbols: binding?.symbols.join(", ") ?? "BTC",
    timeframe: binding?.timeframe ?? "1h",
    timeframes: binding?.timeframes ?? [],
    interval_minutes: binding === undefined ? "60" : String(binding.interval_minutes ?? ""),
    signal_pool_ids: binding?.signal_pool_ids ?? [],
    leverage: String(binding?.leverage ?? ""),
    params: JSON.stringify(binding?.params ?? {}),
    enabled: binding?.enabled ?? true,
    portfolio: binding?.portfolio ?? false
  }, { leverage_too_high: "leverage", symbol_not_listed: "symbols" })
  const save = (v: typeof f.form) => {
    let params: unknown = v.params
    try {
      params = JSON.parse(v.params)
    } catch {
      // Sent as typed: the API's check names the field.
    }
    // A new binding leaves out what is empty; a change sends null, which clears it.
    const cleared = binding === undefined ? undefined : null
    const payload = {
      account_id: Number(v.account_id),
      symbols: symbolsOf(v.symbols),
      timeframe: v.timeframe,
      timeframes: v.timeframes,
      interval_minutes: numberOrNull(v.interval_minutes) ?? cleared,
      signal_pool_ids: v.signal_pool_ids,
      leverage: numberOrNull(v.leverage) ?? cleared,
      params,
      enabled: v.enabled,
      portfolio: v.portfolio
    } as unknown as Parameters<PromiseClient["automation"]["create"]>[0]["payload"]
    return binding === undefined
      ? client.automation.create({ path: { id: program.id }, payload })
      : client.automation.update({ path: { id: program.id, binding_id: binding.id }, payload })
  }
  return (
    <EditFormShell
      f={f}
      label={binding === undefined ? "New binding" : `Edit binding #${binding.id}`}
      submitLabel={binding === undefined ? "Create binding" : "Save binding"}
      onSubmit={f.submit((v) => save(v).then(onDone))}
      onCancel={onDone}
    >
      <Select
        f={f}
        name="account_id"
        label="Account"
        options={accounts.map((a) => [String(a.id), a.name] as const)}
      />
      <Input f={f} name="symbols" label="Symbols" required />
      <Select f={f} name="timeframe" label="Timeframe" options={timeframes} />
      <Checks
        f={f}
        name="timeframes"
        label="Longer timeframes read"
        options={timeframes.map((t) => [t, t] as const)}
      />
      <Input f={f} name="interval_minutes" label="Every (minutes)" type="number" />
      <Checks
        f={f}
        name="signal_pool_ids"
        label="On triggers of"
        options={pools.map((p) => [p.id, p.pool_name] as const)}
      />
      <Input f={f} name="leverage" label="Leverage" type="number" />
      <TextArea f={f} name="params" label="Parameters (JSON)" />
      <Check f={f} name="enabled" label="Enabled" />
      <Check f={f} name="portfolio" label="One run for all symbols" />
    </EditFormShell>
  )
}

/** The program's bindings to accounts: a table, with the forms to create, change and delete them. */
export const Bindings = ({ client, program }: { client: PromiseClient; program: Program }) => {
  const bindings = useLoad(() => client.automation.list({ path: { id: program.id }, urlParams: {} }), [program.id])
  const accounts = useLoad(() => client.accounts.list({ urlParams: {} }), [])
  const pools = useLoad(() => client.signals.list(), [])
  const [editing, setEditing] = useState<Binding>()
  const done = () => {
    setEditing(undefined)
    bindings.reload()
  }
  const accountList = accounts.value ?? []
  const poolList = pools.value?.pools ?? []
  const nameOf = (id: number) => accountList.find((a) => a.id === id)?.name ?? `#${id}`
  const list = bindings.value?.bindings ?? []
  return (
    <section class="bindings">
      <ErrorText error={bindings.error ?? accounts.error ?? pools.error} />
      {accounts.value !== undefined && accountList.length === 0
        ? <p class="muted">Create an account (Accounts) to bind the program to.</p>
        : (
          <Disclosure label="New binding">
            {(close) => (
              <BindingForm
                client={client}
                program={program}
                accounts={accountList}
                pools={poolList}
                onDone={() => (close(), done())}
              />
            )}
          </Disclosure>
        )}
      {bindings.value !== undefined && (list.length === 0
        ? <p class="muted">Not bound to any account.</p>
        : (
          <Table
            headers={["#", "account", "symbols", "timeframe", "every", "pools", "leverage", "enabled", "next run", ""]}
            rows={list.map((b) => [
              b.id,
              nameOf(b.account_id),
              b.symbols.join(", "),
              b.timeframe,
              b.interval_minutes === null ? "–" : `${b.interval_minutes} min`,
              b.signal_pool_ids.map((id) => poolList.find((p) => p.id === id)?.pool_name ?? `#${id}`).join(", "),
              b.leverage ?? "–",
              String(b.enabled),
              b.next_run_at?.slice(0, 16) ?? "–",
              <RowActions
                what="binding"
                name={`#${b.id}`}
                onEdit={() => setEditing(b)}
                onDelete={() => client.automation.delete({ path: { id: program.id, binding_id: b.id } }).then(done)}
              />
            ])}
          />
        ))}
      {editing !== undefined && (
        <BindingForm
          key={editing.id}
          client={client}
          program={program}
          binding={editing}
          accounts={accountList}
          pools={poolList}
          onDone={done}
        />
      )}
    </section>
  )
}
