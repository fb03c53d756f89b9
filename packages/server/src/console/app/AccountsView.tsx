import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { AiBacktests } from "./AiBacktestsPart.js"
import {
  Check,
  Checks,
  DeleteButton,
  Disclosure,
  EditFormShell,
  ErrorText,
  Field,
  Input,
  number,
  numberOrNull,
  Pager,
  Select,
  symbolsOf,
  Table,
  TextArea,
  timeframes,
  useAction,
  useEditForm,
  useLoad,
  usePages,
  wait
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Account = Awaited<ReturnType<PromiseClient["accounts"]["list"]>>[number]
type RiskMode = Awaited<ReturnType<PromiseClient["risk"]["get"]>>["mode"]
const riskModes: ReadonlyArray<RiskMode> = ["active", "reduce_only", "paused", "flatten"]
const environments = [["", "none"], ["paper", "paper"], ["testnet", "testnet"], ["mainnet", "mainnet"]] as const
type Environment = Exclude<Account["venue1_environment"], null>

const text = (value: string | number | null) => value === null ? "" : String(value)
const textOrNull = (value: unknown) => value === "" ? null : String(value)

/**
 * A new account's settings, or an account's to change (its API key kept when left empty); a
 * leverage outside the venue's bounds is named beside the maximum leverage.
 */
const AccountForm = ({ client, account, onDone }: {
  client: PromiseClient
  account?: Account
  onDone: () => void
}) => {
  const f = useEditForm({
    name: account?.name ?? "",
    account_type: account?.account_type ?? "AI",
    initial_capital: "10000",
    model: text(account?.model ?? null),
    base_url: text(account?.base_url ?? null),
    api_key: "",
    default_leverage: text(account?.default_leverage ?? null),
    max_leverage: text(account?.max_leverage ?? null),
    venue1_enabled: account?.venue1_enabled ?? false,
    venue1_environment: text(account?.venue1_environment ?? null),
    margin_mode: account?.margin_mode ?? "isolated",
    is_active: account?.is_active ?? true,
    show_on_dashboard: account?.show_on_dashboard ?? true,
    avatar_preset_id: text(account?.avatar_preset_id ?? null)
  }, { leverage_too_high: "max_leverage" })
  const v = f.form
  const settings = {
    name: v.name,
    model: textOrNull(v.model),
    base_url: textOrNull(v.base_url),
    ...(v.api_key === "" ? {} : { api_key: v.api_key }),
    default_leverage: numberOrNull(v.default_leverage),
    max_leverage: numberOrNull(v.max_leverage),
    venue1_enabled: v.venue1_enabled,
    venue1_environment: textOrNull(v.venue1_environment) as Environment | null,
    margin_mode: v.margin_mode
  }
  const save = () =>
    account === undefined
      ? client.accounts.create({
        payload: { ...settings, account_type: v.account_type, initial_capital: Number(v.initial_capital) }
      })
      : client.accounts.update({
        path: { account_id: account.id },
        payload: {
          ...settings,
          is_active: v.is_active,
          show_on_dashboard: v.show_on_dashboard,
          avatar_preset_id: numberOrNull(v.avatar_preset_id)
        }
      })
  return (
    <EditFormShell
      f={f}
      label={account === undefined ? "New account" : `Edit ${account.name}`}
      submitLabel={account === undefined ? "Create account" : "Save account"}
      onSubmit={f.submit(() => save().then(onDone))}
      onCancel={onDone}
    >
      <Input f={f} name="name" label="Name" required />
      {account === undefined && (
        <>
          <Select f={f} name="account_type" label="Type" options={["AI", "MANUAL"]} />
          <Input f={f} name="initial_capital" label="Initial capital" type="number" step="any" />
        </>
      )}
      <Input f={f} name="model" label="Model" />
      <Input f={f} name="base_url" label="Model base URL" />
      <Input
        f={f}
        name="api_key"
        label={account?.has_api_key ? "Model API key (empty keeps it)" : "Model API key"}
        type="password"
        autocomplete="off"
      />
      <Input f={f} name="default_leverage" label="Default leverage" type="number" />
      <Input f={f} name="max_leverage" label="Max leverage" type="number" />
      <Select f={f} name="margin_mode" label="Margin mode" options={["isolated", "cross"]} />
      <Check f={f} name="venue1_enabled" label="On venue1" />
      <Select f={f} name="venue1_environment" label="venue1 environment" options={environments} />
      {account !== undefined && (
        <>
          <Check f={f} name="is_active" label="Active" />
          <Check f={f} name="show_on_dashboard" label="On the dashboard" />
          <Input f={f} name="avatar_preset_id" label="Avatar preset" type="number" />
        </>
      )}
    </EditFormShell>
  )
}

/**
 * The account's venue connections: its venue1 wallet (stored, then tested) and its venue2 API keys
 * (checked, then stored); it stays open after each, `onStored` reading the account again.
 */
const VenueSetup = ({ client, account, onStored, onClose }: {
  client: PromiseClient
  account: Account
  onStored: () => void
  onClose: () => void
}) => {
  const path = { account_id: account.id }
  const wallet = useEditForm({
    environment: account.venue1_environment ?? "testnet",
    wallet_address: "",
    private_key: ""
  })
  const keys = useEditForm(
    { environment: "testnet", api_key: "", secret_key: "", max_leverage: "", default_leverage: "" },
    { venue_rejected: "api_key", leverage_too_high: "max_leverage" }
  )
  const test = useAction()
  const [tested, setTested] = useState<string>()
  return (
    <>
      <EditFormShell
        f={wallet}
        label="venue1 wallet"
        submitLabel="Store wallet"
        onSubmit={wallet.submit((w) =>
          client.venueAccounts.storeWallet({ path, payload: w as typeof w & { environment: Environment } })
            .then(() => {
              // The secret is stored sealed; it does not stay in the page.
              wallet.setForm((previous) => ({ ...previous, private_key: "" }))
              onStored()
            })
        )}
      >
        <Select f={wallet} name="environment" label="venue1 environment" options={environments.slice(1)} />
        <Input f={wallet} name="wallet_address" label="Wallet address" required />
        <Input f={wallet} name="private_key" label="Private key" type="password" autocomplete="off" required />
      </EditFormShell>
      {account.has_venue1_wallet && (
        <p class="actions">
          <button
            type="button"
            disabled={test.busy}
            onClick={() =>
              void test.run(async () => {
                const result = await client.venueAccounts.testWallet({ path })
                setTested(result.success ? `Wallet answered in ${result.latency_ms} ms.` : result.message ?? "Refused.")
              })}
          >
            Test wallet
          </button>
          <span role="status">{tested}</span>
          <ErrorText error={test.error} />
        </p>
      )}
      <EditFormShell
        f={keys}
        label="venue2 keys"
        focus={false}
        submitLabel="Check and store venue2 keys"
        onSubmit={keys.submit((k) =>
          client.venueAccounts.setupVenue2({
            path,
            payload: {
              environment: k.environment as "testnet" | "mainnet",
              api_key: k.api_key,
              secret_key: k.secret_key,
              ...(k.max_leverage === "" ? {} : { max_leverage: Number(k.max_leverage) }),
              ...(k.default_leverage === "" ? {} : { default_leverage: Number(k.default_leverage) })
            }
          }).then(() => {
            keys.setForm((previous) => ({ ...previous, api_key: "", secret_key: "" }))
            onStored()
          })
        )}
      >
        <Select f={keys} name="environment" label="venue2 environment" options={["testnet", "mainnet"]} />
        <Input f={keys} name="api_key" label="venue2 API key" type="password" autocomplete="off" required />
        <Input f={keys} name="secret_key" label="venue2 secret key" type="password" autocomplete="off" required />
        <Input f={keys} name="max_leverage" label="Max leverage" type="number" />
        <Input f={keys} name="default_leverage" label="Default leverage" type="number" />
      </EditFormShell>
      <button type="button" onClick={onClose}>Close venue setup</button>
    </>
  )
}

type AiTrader = Awaited<ReturnType<PromiseClient["aitraders"]["get"]>>

/** What an AI account trades and how often its model decides: its schedule, symbols, signal pools and limits. */
const AiTraderForm = ({ client, account, settings, onDone }: {
  client: PromiseClient
  account: Account
  settings: AiTrader
  onDone: () => void
}) => {
  const pools = useLoad(() => client.signals.list(), [])
  const f = useEditForm({
    enabled: settings.enabled,
    symbols: settings.symbols.join(", "),
    timeframe: settings.timeframe,
    interval_minutes: String(settings.interval_minutes),
    signal_pool_ids: settings.signal_pool_ids,
    max_rounds_per_hour: text(settings.max_rounds_per_hour),
    max_tokens_per_day: text(settings.max_tokens_per_day),
    system_prompt: settings.system_prompt ?? "",
    user_template: settings.user_template ?? ""
  }, { symbol_not_listed: "symbols" })
  return (
    <EditFormShell
      f={f}
      label="AI trader"
      submitLabel="Save AI trader"
      onCancel={onDone}
      onSubmit={f.submit((v) =>
        client.aitraders.update({
          path: { account_id: account.id },
          payload: {
            enabled: v.enabled,
            symbols: symbolsOf(v.symbols),
            timeframe: v.timeframe,
            interval_minutes: Number(v.interval_minutes),
            signal_pool_ids: v.signal_pool_ids,
            // Empty is null: the server's default.
            max_rounds_per_hour: numberOrNull(v.max_rounds_per_hour),
            max_tokens_per_day: numberOrNull(v.max_tokens_per_day),
            system_prompt: textOrNull(v.system_prompt),
            user_template: textOrNull(v.user_template)
          }
        }).then(onDone)
      )}
    >
      <Check f={f} name="enabled" label="Decides on its schedule" />
      <Input f={f} name="symbols" label="Symbols" />
      <Select f={f} name="timeframe" label="Timeframe" options={timeframes} />
      <Input f={f} name="interval_minutes" label="Every (minutes)" type="number" />
      <Checks
        f={f}
        name="signal_pool_ids"
        label="Signal pools"
        options={(pools.value?.pools ?? []).map((p) => [p.id as number, p.pool_name] as const)}
      />
      <Input f={f} name="max_rounds_per_hour" label="Rounds per hour at most (empty: the default)" type="number" />
      <Input f={f} name="max_tokens_per_day" label="Tokens per day at most (empty: the default)" type="number" />
      <TextArea f={f} name="system_prompt" label="System prompt (empty: the default)" />
      <TextArea f={f} name="user_template" label="User message (empty: the default)" />
    </EditFormShell>
  )
}

/** An AI account's trader settings, and the form to change them; its model key, to clear. */
const AiTraderSettings = ({ client, account, onChange }: {
  client: PromiseClient
  account: Account
  onChange: () => void
}) => {
  const settings = useLoad(() => client.aitraders.get({ path: { account_id: account.id } }), [account.id])
  const s = settings.value
  if (s === undefined) return <ErrorText error={settings.error} />
  return (
    <section class="ai-trader">
      <p>
        AI trader: {s.enabled ? "on" : "off"}, {s.symbols.join(", ")} on {s.timeframe} every {s.interval_minutes}{" "}
        min, model {s.model}, {account.has_api_key ? "its API key stored" : "no API key"}
      </p>
      {account.has_api_key && (
        <DeleteButton
          what="model API key of"
          name={account.name}
          onDelete={() =>
            client.accounts.update({ path: { account_id: account.id }, payload: { api_key: null } }).then(onChange)}
        />
      )}
      <Disclosure label="Edit AI trader">
        {(close) => (
          <AiTraderForm
            client={client}
            account={account}
            settings={s}
            onDone={() => {
              close()
              settings.reload()
            }}
          />
        )}
      </Disclosure>
    </section>
  )
}

/** The account's risk mode, why it is so, and the control to change it. */
const Risk = ({ client, account }: { client: PromiseClient; account: Account }) => {
  const risk = useLoad(() => client.risk.get({ path: { account_id: account.id } }), [account.id])
  const [mode, setMode] = useState<RiskMode>()
  const change = useAction()
  if (risk.value === undefined) return <ErrorText error={risk.error} />
  const r = risk.value
  return (
    <form
      class={`inline risk risk-${r.mode}`}
      onSubmit={(event) => {
        event.preventDefault()
        void change.run(() =>
          client.risk.update({ path: { account_id: account.id }, payload: { mode: mode ?? r.mode } }).then(risk.reload)
        )
      }}
    >
      <p>
        Risk: {r.mode.replace("_", " ")}
        {r.resume_at === null ? "" : ` until ${r.resume_at}`}
        {r.reason === null ? "" : ` (${r.reason})`}
      </p>
      <Field label="Risk mode">
        <select name="risk_mode" value={mode ?? r.mode} onChange={(e) => setMode(e.currentTarget.value as RiskMode)}>
          {riskModes.map((m) => <option value={m}>{m.replace("_", " ")}</option>)}
        </select>
      </Field>
      <button type="submit" disabled={change.busy}>Set mode</button>
      <ErrorText error={change.error} />
    </form>
  )
}

/**
 * An AI account's conversation with the market: its latest decision rounds, each what the model
 * was shown (the prompt), what it answered, the decisions and the orders that followed; and a
 * button to run a round now.
 */
const DecisionLog = ({ client, account }: { client: PromiseClient; account: Account }) => {
  const log = useLoad(
    () => client.aitraders.decisions({ path: { account_id: account.id }, urlParams: { limit: 10 } }),
    [account.id]
  )
  const decide = useAction()
  const rounds = log.value?.decisions ?? []
  const runNow = () =>
    void decide.run(async () => {
      const queued = await client.aitraders.decide({ path: { account_id: account.id } })
      // The round runs in the background: follow it for a minute at most.
      for (let waited = 0; waited < 60; waited++) {
        const { decisions } = await client.aitraders.decisions({
          path: { account_id: account.id },
          urlParams: { limit: 10 }
        })
        const round = decisions.find((d) => d.id === queued.id)
        if (round?.status === "completed" || round?.status === "failed") break
        await wait(1000)
      }
      log.reload()
    })
  return (
    <section class="decision-log">
      <h4>
        Decision log <button type="button" disabled={decide.busy} onClick={runNow}>Decide now</button>
      </h4>
      <ErrorText error={decide.error ?? log.error} />
      {log.value !== undefined && rounds.length === 0 && <p role="status">No decision rounds yet.</p>}
      <div class="rounds">
        {rounds.map((round) => (
          <details class="round">
            <summary>
              {`${round.created_at.slice(0, 16)} · ${round.trigger} · ${round.outcome ?? round.status}`}
              {round.model === null ? "" : ` · ${round.model}${round.cached ? " (cached)" : ""}`}
              {` · ${round.prompt_tokens + round.completion_tokens} tokens`}
            </summary>
            {round.error !== null && <p class="error">{round.error}</p>}
            <h5>Shown to the model</h5>
            <pre class="chat">{round.prompt ?? "–"}</pre>
            <h5>Its answer</h5>
            <pre class="chat answer">{round.raw_answer ?? "–"}</pre>
            {round.decisions !== null && (
              <Table
                headers={["symbol", "operation", "portion", "leverage", "reason", "order"]}
                rows={round.decisions.map((d) => {
                  const order = round.orders.find((o) => o.symbol === d.symbol)
                  return [
                    d.symbol,
                    d.operation,
                    number(d.target_portion_of_balance),
                    d.leverage ?? "–",
                    <span class="text">{d.reason}</span>,
                    order === undefined ? "–" : order.error ?? order.status ?? "none"
                  ]
                })}
              />
            )}
          </details>
        ))}
      </div>
    </section>
  )
}

const perPage = 10

/** One of the account's lists, newest first, a page at a time, in a section of its own (`name`, its class). */
function AccountList<A>({ account, name, title, none, load, headers, row }: {
  account: Account
  name: string
  title: string
  none: string
  load: (page: { readonly limit: number; readonly offset: number }) => Promise<ReadonlyArray<A>>
  headers: ReadonlyArray<string>
  row: (item: A) => ReadonlyArray<ComponentChildren>
}) {
  const page = usePages(load, perPage, [account.id])
  const items = page.value ?? []
  if (page.value !== undefined && items.length === 0 && page.offset === 0) return <p class="muted">{none}</p>
  return (
    <section class={name}>
      <h4>{title}</h4>
      <ErrorText error={page.error} />
      <Table headers={headers} rows={items.map(row)} />
      <Pager offset={page.offset} limit={perPage} shown={items.length} onPage={page.goTo} />
    </section>
  )
}

/** The account's orders: filled ones with their price, fee and realised PnL. */
const Orders = ({ client, account }: { client: PromiseClient; account: Account }) => (
  <AccountList
    account={account}
    name="orders"
    title="Orders and fills"
    none="No orders yet."
    load={(urlParams) =>
      client.automation.orders({ path: { account_id: account.id }, urlParams }).then((page) => page.orders)}
    headers={["placed", "symbol", "side", "type", "quantity", "status", "price", "fee", "realised PnL", "by"]}
    row={(o) => [
      o.created_at.slice(0, 16),
      o.symbol,
      o.side,
      o.order_type,
      number(o.quantity, 6),
      o.error === null ? o.status : `${o.status}: ${o.error}`,
      number(o.price),
      number(o.fee),
      number(o.realized_pnl),
      o.trigger
    ]}
  />
)

/** What the reconciliation found between the ledger and the venue, and what it did (a venue account's). */
const Reconciliations = ({ client, account }: { client: PromiseClient; account: Account }) => (
  <AccountList
    account={account}
    name="reconciliations"
    title="Reconciliation events"
    none="No reconciliation events."
    load={(urlParams) =>
      client.automation.reconciliations({ path: { account_id: account.id }, urlParams }).then((page) =>
        page.reconciliations
      )}
    headers={["when", "venue", "kind", "symbol", "ledger", "venue size", "what was done"]}
    row={(r) => [
      r.created_at.slice(0, 16),
      r.exchange,
      r.kind,
      r.symbol ?? "–",
      number(r.ledger_size, 6),
      number(r.venue_size, 6),
      <span class="text">{r.message}</span>
    ]}
  />
)

const AccountCard = (
  { client, account, onChange }: { client: PromiseClient; account: Account; onChange: () => void }
) => {
  const positions = useLoad(() => client.automation.positions({ path: { account_id: account.id }, urlParams: {} }), [
    account.id
  ])
  const [editing, setEditing] = useState<"settings" | "venues">()
  const done = () => {
    setEditing(undefined)
    onChange()
  }
  return (
    <article class="account" data-id={account.id}>
      <h3>
        {account.name} <span class="muted">{account.account_type}</span>
      </h3>
      <p class="muted settings">
        {account.is_active ? "active" : "inactive"}, {account.show_on_dashboard ? "on" : "off"} the dashboard,{" "}
        {account.venue1_enabled ? `venue1 ${account.venue1_environment ?? ""}` : "venue2"}, {account.margin_mode}{" "}
        margin, leverage {account.default_leverage ?? "–"} up to {account.max_leverage ?? "–"}
        {account.model === null ? "" : `, model ${account.model}`}
        {account.has_venue1_wallet ? ", venue1 wallet stored" : ""}
        {account.has_venue2_keys ? ", venue2 keys stored" : ""}
      </p>
      <div class="actions">
        <button type="button" aria-expanded={editing === "settings"} onClick={() => setEditing("settings")}>
          Edit account
        </button>
        <button type="button" aria-expanded={editing === "venues"} onClick={() => setEditing("venues")}>
          Venue setup
        </button>
        <DeleteButton
          what="account"
          name={account.name}
          onDelete={() => client.accounts.remove({ path: { account_id: account.id } }).then(onChange)}
        />
      </div>
      {editing === "settings" && <AccountForm client={client} account={account} onDone={done} />}
      {editing === "venues" && (
        <VenueSetup
          client={client}
          account={account}
          onStored={onChange}
          onClose={() => setEditing(undefined)}
        />
      )}
      <Risk client={client} account={account} />
      <Table
        headers={["initial capital", "cash", "frozen"]}
        rows={[[number(account.initial_capital), number(account.current_cash), number(account.frozen_cash)]]}
      />
      <ErrorText error={positions.error} />
      {positions.value !== undefined && (positions.value.positions.length === 0
        ? <p class="muted">No open positions.</p>
        : (
          <Table
            headers={["symbol", "side", "size", "entry price", "leverage", "margin", "opened"]}
            rows={positions.value.positions.map((p) => [
              p.symbol,
              p.side,
              number(p.size, 6),
              number(p.entry_price),
              p.leverage,
              number(p.margin),
              p.opened_at
            ])}
          />
        ))}
      <Orders client={client} account={account} />
      <Reconciliations client={client} account={account} />
      {account.account_type === "AI" && <AiTraderSettings client={client} account={account} onChange={onChange} />}
      {account.account_type === "AI" && <DecisionLog client={client} account={account} />}
      {account.account_type === "AI" && <AiBacktests client={client} accountId={account.id} />}
    </article>
  )
}

/**
 * Each account: its settings with the forms to change them, its venue connections and its deletion;
 * capital, cash, risk mode and its control, open positions, orders and fills, and an AI account's
 * trader settings and decision log. And a form for a new account.
 */
export const AccountsView = ({ client }: { client: PromiseClient }) => {
  const accounts = useLoad(() => client.accounts.list({ urlParams: {} }), [])
  return (
    <section>
      <h2>Accounts</h2>
      <Disclosure label="New account">
        {(close) => (
          <AccountForm
            client={client}
            onDone={() => {
              close()
              accounts.reload()
            }}
          />
        )}
      </Disclosure>
      <ErrorText error={accounts.error} />
      {accounts.value?.length === 0 && <p class="muted">No accounts yet.</p>}
      {accounts.value?.map((account) => (
        <AccountCard key={account.id} client={client} account={account} onChange={accounts.reload} />
      ))}
    </section>
  )
}
