import { useState } from "preact/hooks"
import { ErrorText, Field, number, Pager, Table, useAction, useLoad, wait } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Account = Awaited<ReturnType<PromiseClient["accounts"]["list"]>>[number]
type RiskMode = Awaited<ReturnType<PromiseClient["risk"]["get"]>>["mode"]
const riskModes: ReadonlyArray<RiskMode> = ["active", "reduce_only", "paused", "flatten"]

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

const ordersPage = 10

/** The account's orders, newest first, a page at a time: filled ones with their price, fee and realised PnL. */
const Orders = ({ client, account }: { client: PromiseClient; account: Account }) => {
  const [offset, setOffset] = useState(0)
  const page = useLoad(
    () => client.automation.orders({ path: { account_id: account.id }, urlParams: { limit: ordersPage, offset } }),
    [account.id, offset]
  )
  const orders = page.value?.orders ?? []
  if (page.value !== undefined && orders.length === 0 && offset === 0) return <p class="muted">No orders yet.</p>
  return (
    <section class="orders">
      <h4>Orders and fills</h4>
      <ErrorText error={page.error} />
      <Table
        headers={["placed", "symbol", "side", "type", "quantity", "status", "price", "fee", "realised PnL", "by"]}
        rows={orders.map((o) => [
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
        ])}
      />
      <Pager offset={offset} limit={ordersPage} shown={orders.length} onPage={setOffset} />
    </section>
  )
}

const AccountCard = ({ client, account }: { client: PromiseClient; account: Account }) => {
  const positions = useLoad(() => client.automation.positions({ path: { account_id: account.id }, urlParams: {} }), [
    account.id
  ])
  return (
    <article class="account">
      <h3>
        {account.name} <span class="muted">{account.account_type}</span>
      </h3>
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
      {account.account_type === "AI" && <DecisionLog client={client} account={account} />}
    </article>
  )
}

/** Each account: capital, cash, risk mode and its control, open positions, orders and fills, and an AI account's decision log. */
export const AccountsView = ({ client }: { client: PromiseClient }) => {
  const accounts = useLoad(() => client.accounts.list({ urlParams: {} }), [])
  return (
    <section>
      <h2>Accounts</h2>
      <ErrorText error={accounts.error} />
      {accounts.value?.length === 0 && <p class="muted">No accounts yet.</p>}
      {accounts.value?.map((account) => <AccountCard client={client} account={account} />)}
    </section>
  )
}
