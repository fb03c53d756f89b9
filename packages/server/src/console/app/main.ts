/**
 * The web console: one page, talking to the API only through the Promise client. The session
 * token stays in this tab's session storage and goes out in the Authorization header only.
 */
import { createClient, type PromiseClient, TradingApiError } from "@trading-platform/client"
import { drawdowns, lineChart, linesChart } from "./Charts.js"
import { h, number, show, table } from "./Dom.js"
import "./console.css"

// The API is served next to the console: `/console` → `/api/...`, `/trading/console` → `/trading/api/...`.
const baseUrl = location.origin + location.pathname.replace(/\/console\/?$/, "")
const tokenKey = "trading-platform-token"
const root = document.getElementById("app")!

/** What went wrong, in the API's words. */
const describe = (error: unknown) =>
  error instanceof TradingApiError
    ? `${error.message} (${error.code})`
    : String((error as { error?: string })?.error ?? (error as Error)?.message ?? error)

/** Runs `task`, showing its failure in `status` instead of throwing. */
const attempt = async (status: HTMLElement, task: () => Promise<void>) => {
  status.textContent = ""
  status.className = "muted"
  try {
    await task()
  } catch (error) {
    status.className = "error"
    status.textContent = describe(error)
  }
}

const field = (label: string, input: HTMLInputElement | HTMLSelectElement) => h("label", {}, label, input)

const loginView = () => {
  const email = h("input", { name: "email", type: "email", required: true, autocomplete: "username" })
  const password = h("input", { name: "password", type: "password", required: true, autocomplete: "current-password" })
  const username = h("input", { name: "username", autocomplete: "nickname" })
  const status = h("p", { role: "status" })
  const client = createClient({ baseUrl })
  let registering = false
  const usernameField = field("Username", username)
  usernameField.hidden = true
  const submit = h("button", { type: "submit" }, "Log in")
  const toggle = h("button", { type: "button", class: "link" }, "Create an account")
  toggle.addEventListener("click", () => {
    registering = !registering
    usernameField.hidden = !registering
    username.required = registering
    submit.textContent = registering ? "Register and log in" : "Log in"
    toggle.textContent = registering ? "I have an account" : "Create an account"
  })
  const form = h(
    "form",
    {},
    field("Email", email),
    usernameField,
    field("Password", password),
    submit,
    toggle
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void attempt(status, async () => {
      const credentials = { email: email.value, password: password.value }
      if (registering) await client.users.register({ payload: { ...credentials, username: username.value } })
      const { session_token } = await client.users.login({ payload: credentials })
      sessionStorage.setItem(tokenKey, session_token)
      start()
    })
  })
  show(root, h("section", { class: "login" }, h("h1", {}, "Trading Platform"), form, status))
}

type View = (client: PromiseClient, into: HTMLElement) => (() => void) | void

const accountsView: View = (client, into) => {
  const status = h("p", { role: "status" })
  show(into, h("h2", {}, "Accounts"), status)
  void attempt(status, async () => {
    const accounts = await client.accounts.list({ urlParams: {} })
    if (accounts.length === 0) status.textContent = "No accounts yet."
    for (const account of accounts) {
      const { positions } = await client.automation.positions({ path: { account_id: account.id }, urlParams: {} })
      const risk = await client.risk.get({ path: { account_id: account.id } })
      into.append(
        h("h3", {}, account.name, " ", h("span", { class: "muted" }, account.account_type)),
        h(
          "p",
          { class: `risk risk-${risk.mode}` },
          `Risk: ${risk.mode.replace("_", " ")}`,
          risk.resume_at === null ? "" : ` until ${risk.resume_at}`,
          risk.reason === null ? "" : ` (${risk.reason})`
        ),
        table(["initial capital", "cash", "frozen"], [[
          number(account.initial_capital),
          number(account.current_cash),
          number(account.frozen_cash)
        ]]),
        positions.length === 0
          ? h("p", { class: "muted" }, "No open positions.")
          : table(
            ["symbol", "side", "size", "entry price", "leverage", "margin", "opened"],
            positions.map((p) => [
              p.symbol,
              p.side,
              number(p.size, 6),
              number(p.entry_price),
              p.leverage,
              number(p.margin),
              p.opened_at
            ])
          ),
        ...(account.account_type === "AI" ? [decisionLog(client, account.id)] : [])
      )
    }
  })
}

/**
 * An AI account's conversation with the market: its latest decision rounds, each what the model
 * was shown (the prompt), what it answered, the decisions and the orders that followed; and a
 * button to run a round now.
 */
const decisionLog = (
  client: PromiseClient,
  accountId: Awaited<ReturnType<PromiseClient["accounts"]["list"]>>[number]["id"]
) => {
  const status = h("p", { role: "status" })
  const rounds = h("div", { class: "rounds" })
  const decide = h("button", { type: "button" }, "Decide now")
  /** Shows the latest rounds; answers whether the round `pending` (if any) has finished. */
  const load = async (pending?: number) => {
    const { decisions } = await client.aitraders.decisions({
      path: { account_id: accountId },
      urlParams: { limit: 10 }
    })
    status.textContent = decisions.length === 0 ? "No decision rounds yet." : ""
    show(
      rounds,
      ...decisions.map((round) =>
        h(
          "details",
          { class: "round" },
          h(
            "summary",
            {},
            `${round.created_at.slice(0, 16)} · ${round.trigger} · ${round.outcome ?? round.status}`,
            round.model === null ? "" : ` · ${round.model}${round.cached ? " (cached)" : ""}`,
            ` · ${round.prompt_tokens + round.completion_tokens} tokens`
          ),
          round.error === null ? null : h("p", { class: "error" }, round.error),
          h("h5", {}, "Shown to the model"),
          h("pre", { class: "chat" }, round.prompt ?? "–"),
          h("h5", {}, "Its answer"),
          h("pre", { class: "chat answer" }, round.raw_answer ?? "–"),
          round.decisions === null ? null : table(
            ["symbol", "operation", "portion", "leverage", "reason", "order"],
            round.decisions.map((d) => {
              const order = round.orders.find((o) => o.symbol === d.symbol)
              return [
                d.symbol,
                d.operation,
                number(d.target_portion_of_balance),
                d.leverage ?? "–",
                h("span", { class: "text" }, d.reason),
                order === undefined ? "–" : order.error ?? order.status ?? "none"
              ]
            })
          )
        )
      )
    )
    const round = decisions.find((d) => d.id === pending)
    return round === undefined || round.status === "completed" || round.status === "failed"
  }
  decide.addEventListener("click", () =>
    void attempt(status, async () => {
      const queued = await client.aitraders.decide({ path: { account_id: accountId } })
      // The round runs in the background: follow it for a minute at most.
      for (let waited = 0; !(await load(queued.id)) && waited < 60; waited++) {
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }))
  void attempt(status, () => load().then(() => undefined))
  return h("section", { class: "decision-log" }, h("h4", {}, "Decision log ", decide), status, rounds)
}

const starter = `// decide(data) is called on every bar; answer an operation.
export function decide(data) {
  return { operation: "hold" }
}
`

/** A backtest's metrics, equity curve, drawdown and trades. */
const backtestResult = (backtest: Awaited<ReturnType<PromiseClient["backtests"]["get"]>>) => {
  const times = backtest.equity_curve.map((point) => point.time)
  const equity = backtest.equity_curve.map((point) => point.equity)
  const m = backtest.metrics
  return h(
    "section",
    { class: "backtest", "data-status": backtest.status },
    h("h3", {}, `Backtest #${backtest.id}: ${backtest.symbol} ${backtest.timeframe}, ${backtest.status}`),
    backtest.error ? h("p", { class: "error" }, backtest.error) : null,
    m
      ? table(["PnL", "PnL %", "trades", "win rate", "max drawdown %", "Sharpe", "profit factor"], [[
        number(m.total_pnl),
        number(m.total_pnl_percent),
        m.total_trades,
        number(m.win_rate * 100, 1) + " %",
        number(m.max_drawdown_percent),
        number(m.sharpe),
        number(m.profit_factor)
      ]])
      : null,
    equity.length > 1
      ? [
        h("h4", {}, "Equity"),
        lineChart("Equity curve", times, equity, { format: (v) => number(v) }),
        h("h4", {}, "Drawdown"),
        lineChart("Drawdown", times, drawdowns(equity), { fill: true, format: (v) => `${number(v * 100, 1)} %` })
      ]
      : null,
    backtest.trades.length > 0
      ? [
        h("h4", {}, `Trades (${backtest.trades.length})`),
        table(
          ["side", "size", "entry", "entry price", "exit", "exit price", "fee", "PnL", "exit reason"],
          backtest.trades.map((t) => [
            t.side,
            number(t.size, 6),
            new Date(t.entry_time).toISOString(),
            number(t.entry_price),
            new Date(t.exit_time).toISOString(),
            number(t.exit_price),
            number(t.fee),
            number(t.pnl),
            t.exit_reason
          ])
        )
      ]
      : null
  )
}

const programsView: View = (client, into) => {
  const list = h("ul", { class: "list" })
  const detail = h("div", {})
  const status = h("p", { role: "status" })
  let stopped = false
  show(into, h("h2", {}, "Programs"), status, h("div", { class: "columns" }, h("div", {}, list), detail))

  const newProgram = h("button", { type: "button" }, "New program")
  newProgram.addEventListener("click", () =>
    void attempt(status, async () => {
      const program = await client.programs.create({ payload: { name: "New program", code: starter } })
      await refresh(program.id)
    }))

  const open = async (id: number) => {
    const program = await client.programs.get({ path: { id: id as never } })
    for (const button of list.querySelectorAll("button[data-id]")) {
      button.setAttribute("aria-current", String(button.getAttribute("data-id") === String(id)))
    }
    const name = h("input", { name: "name", value: program.name })
    const code = h("textarea", { name: "code", spellcheck: "false" })
    code.value = program.code
    const saved = h("span", { role: "status" })
    const editor = h(
      "form",
      { class: "editor" },
      field("Name", name),
      code,
      h("button", { type: "submit" }, "Save"),
      saved
    )
    editor.addEventListener("submit", (event) => {
      event.preventDefault()
      void attempt(saved, async () => {
        await client.programs.update({ path: { id: program.id }, payload: { name: name.value, code: code.value } })
        saved.textContent = "Saved."
      })
    })

    const day = 24 * 3600 * 1000
    const today = new Date(Math.floor(Date.now() / day) * day)
    const symbol = h("input", { name: "symbol", value: "BTC", size: "8" })
    const timeframe = h(
      "select",
      { name: "timeframe" },
      ["1m", "5m", "15m", "1h", "4h", "1d"].map((t) => h("option", {}, t))
    )
    timeframe.value = "1h"
    const from = h("input", {
      name: "from",
      type: "date",
      value: new Date(+today - 30 * day).toISOString().slice(0, 10)
    })
    const to = h("input", { name: "to", type: "date", value: today.toISOString().slice(0, 10) })
    const progress = h("span", { role: "status" })
    const result = h("div", {})
    const history = h("div", {})
    const run = h(
      "form",
      { class: "run" },
      field("Symbol", symbol),
      field("Timeframe", timeframe),
      field("From", from),
      field("To", to),
      h("button", { type: "submit" }, "Run backtest"),
      progress
    )

    const showBacktest = async (backtestId: number) => {
      let backtest = await client.backtests.get({ path: { id: backtestId as never } })
      while ((backtest.status === "queued" || backtest.status === "running") && !stopped) {
        progress.textContent = `${backtest.status} ${Math.round(backtest.progress * 100)} %`
        await new Promise((resolve) => setTimeout(resolve, 500))
        backtest = await client.backtests.get({ path: { id: backtest.id } })
      }
      progress.textContent = ""
      show(result, backtestResult(backtest))
    }

    const listBacktests = async () => {
      const { backtests } = await client.backtests.history({ urlParams: { program_id: program.id, limit: 20 } })
      show(
        history,
        h("h3", {}, "Backtests"),
        backtests.length === 0 ? h("p", { class: "muted" }, "None yet.") : table(
          ["#", "symbol", "timeframe", "status", "PnL", "trades", "created", ""],
          backtests.map((b) => {
            const view = h("button", { type: "button" }, "Show")
            view.addEventListener("click", () => void attempt(progress, () => showBacktest(b.id)))
            return [b.id, b.symbol, b.timeframe, b.status, number(b.total_pnl), b.total_trades, b.created_at, view]
          })
        )
      )
    }

    run.addEventListener("submit", (event) => {
      event.preventDefault()
      void attempt(progress, async () => {
        const backtest = await client.backtests.submit({
          path: { id: program.id },
          payload: {
            symbol: symbol.value,
            timeframe: timeframe.value as "1h",
            start: `${from.value}T00:00:00Z`,
            end: `${to.value}T00:00:00Z`
          }
        })
        await showBacktest(backtest.id)
        await listBacktests()
      })
    })
    show(detail, editor, h("h3", {}, "Run a backtest"), run, result, history)
    await listBacktests()
  }

  const refresh = async (select?: number) => {
    const { programs } = await client.programs.list({ urlParams: {} })
    show(
      list,
      h("li", {}, newProgram),
      ...programs.map((program) => {
        const button = h("button", { type: "button", "data-id": String(program.id) }, program.name)
        button.addEventListener("click", () => void attempt(status, () => open(program.id)))
        return h("li", {}, button)
      })
    )
    const first = select ?? programs[0]?.id
    if (first !== undefined) await open(first)
  }
  void attempt(status, () => refresh())
  return () => {
    stopped = true
  }
}

const rankingView: View = (client, into) => {
  const status = h("p", { role: "status" }, "Ranking the venue's symbols…")
  const holder = h("div", {})
  show(into, h("h2", {}, "Ranking"), status, holder)
  void attempt(status, async () => {
    const ranking = await client.ranking.table({ urlParams: {} })
    status.textContent = `${ranking.exchange}, ${ranking.timeframe}, computed ${ranking.computed_at}`
    const factors = Object.keys(ranking.weights)
    type Row = (typeof ranking.rows)[number]
    const columns: Array<[string, (row: Row) => number | string | null]> = [
      ["rank", (row) => row.rank],
      ["symbol", (row) => row.symbol],
      ["score", (row) => row.score],
      ...factors.map((key): [string, (row: Row) => number | null] => [key, (row) => row.factors[key] ?? null])
    ]
    let sortKey = "rank"
    let ascending = true
    const render = () => {
      const value = columns.find(([key]) => key === sortKey)![1]
      const rows = [...ranking.rows].sort((a, b) => {
        const [x, y] = [value(a), value(b)]
        // Missing values last, whichever the direction.
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1
        const order = typeof x === "string" ? x.localeCompare(String(y)) : x - (y as number)
        return ascending ? order : -order
      })
      const head = h(
        "tr",
        {},
        columns.map(([key]) => {
          const th = h("th", {
            "data-key": key,
            "aria-sort": key === sortKey ? (ascending ? "ascending" : "descending") : "none"
          }, key)
          th.addEventListener("click", () => {
            ascending = key === sortKey ? !ascending : true
            sortKey = key
            render()
          })
          return th
        })
      )
      const body = rows.map((row) =>
        h(
          "tr",
          {},
          columns.map(([key, get]) => {
            const v = get(row)
            return h("td", key === "symbol" ? { class: "text" } : {}, typeof v === "number" ? number(v, 4) : v ?? "–")
          })
        )
      )
      show(holder, h("table", { class: "ranking" }, h("thead", {}, head), h("tbody", {}, body)))
    }
    render()
  })
}

const signalsView: View = (client, into) => {
  const status = h("p", { role: "status" })
  const pools = h("div", {})
  const live = h("p", { class: "muted" })
  const triggers = h("tbody", {})
  let stream: AsyncIterator<unknown> | undefined
  let stopped = false
  show(
    into,
    h("h2", {}, "Signal pools"),
    status,
    pools,
    h("h3", {}, "Latest triggers"),
    live,
    h(
      "table",
      { class: "triggers" },
      h("thead", {}, h("tr", {}, ["fired", "pool", "symbol", "values"].map((t) => h("th", {}, t)))),
      triggers
    )
  )
  const trigger = (t: { fired_at: string; pool_name: string; symbol: string; values: ReadonlyArray<any> }) =>
    h(
      "tr",
      {},
      h("td", {}, t.fired_at),
      h("td", { class: "text" }, t.pool_name),
      h("td", { class: "text" }, t.symbol),
      h("td", { class: "text" }, t.values.map((v) => `${v.signal_name}: ${number(v.value, 4)}`).join(", "))
    )
  void attempt(status, async () => {
    const listing = await client.signals.list()
    show(
      pools,
      listing.pools.length === 0
        ? h("p", { class: "muted" }, "No signal pools yet (create them through the API: docs/signals.md).")
        : table(
          ["pool", "venue", "symbols", "logic", "enabled"],
          listing.pools.map((p) => [p.pool_name, p.exchange, p.symbols.join(", "), p.logic, String(p.enabled)])
        )
    )
    const { triggers: recent } = await client.signals.triggers({ urlParams: { limit: 20 } })
    triggers.replaceChildren(...recent.map(trigger))
    const symbols = [...new Set(listing.pools.flatMap((p) => p.symbols))]
    if (symbols.length === 0 || stopped) return
    // The stream's snapshot repeats the recent triggers; its updates bring each new one as it fires.
    stream = client.marketIntelligence(symbols.slice(0, 50))[Symbol.asyncIterator]()
    live.textContent = "Live: new triggers appear here as they fire."
    for (let next = await stream.next(); !next.done && !stopped; next = await stream.next()) {
      const event = next.value as { event: string; data: any }
      if (event.event === "update" && event.data.kind === "trigger") {
        triggers.prepend(trigger(event.data.trigger))
        triggers.firstElementChild?.classList.add("new")
      }
    }
  })
  return () => {
    stopped = true
    void stream?.return?.()
  }
}

const assistantView: View = (client, into) => {
  const message = h("textarea", {
    name: "message",
    class: "short",
    rows: "3",
    placeholder: "How is BTC doing on the 1h chart?"
  })
  const transcript = h("div", {})
  const status = h("p", { role: "status" })
  let conversation: number | undefined
  const form = h("form", {}, message, h("button", { type: "submit" }, "Ask"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const text = message.value.trim()
    if (text === "") return
    message.value = ""
    const answer = h("div", { class: "chat answer" })
    transcript.append(h("p", { class: "chat question" }, text), answer)
    void attempt(status, async () => {
      for await (
        const { data, event } of client.assistantChat({ message: text, conversation_id: conversation as never })
      ) {
        const d = data as Record<string, any>
        if (event === "delta") answer.append(String(d.text))
        if (event === "tool_call") answer.append(h("div", { class: "tool" }, `→ ${d.name}`))
        if (event === "done") conversation = d.conversation_id
        if (event === "error") throw d
      }
    })
  })
  show(into, h("h2", {}, "Assistant"), transcript, form, status)
}

const windows = ["24h", "7d", "30d", "90d", "all"] as const

/** The leaderboard: every dashboard account's return over the window on one chart, and ranked in a table. */
const arenaView: View = (client, into) => {
  const status = h("p", { role: "status" })
  const holder = h("div", {})
  const window = h("select", { name: "window" }, windows.map((w) => h("option", { value: w, selected: w === "7d" }, w)))
  const load = () =>
    attempt(status, async () => {
      const board = await client.arena.leaderboard({
        urlParams: { window: window.value as (typeof windows)[number], limit: 50 }
      })
      if (board.entries.length === 0) {
        status.textContent = "No account on the dashboard has been measured yet."
        return show(holder)
      }
      status.textContent = `${board.total} accounts, ${board.from.slice(0, 16)} to ${board.to.slice(0, 16)} (UTC)`
      const trader = (e: (typeof board.entries)[number]) =>
        [
          e.model === null ? "manual" : `AI (${e.model}${e.ai_trading ? "" : ", off"})`,
          ...(e.program_bindings > 0
            ? [`${e.program_bindings} program binding${e.program_bindings === 1 ? "" : "s"}`]
            : [])
        ].join(", ")
      show(
        holder,
        // Returns rather than equity, so accounts of any size share the axis.
        linesChart(
          "Return of each account over the window",
          board.entries.map((e) => ({
            name: e.name,
            times: e.equity_curve.map((p) => Date.parse(p.at)),
            values: e.equity_curve.map((p) => (p.equity / e.start_equity - 1) * 100)
          })),
          { format: (v) => `${number(v)}%` }
        ),
        h("ul", { class: "legend" }, board.entries.map((e, i) => h("li", { class: `s${i % 8}` }, e.name))),
        table(
          [
            "rank",
            "account",
            "owner",
            "trader",
            "equity",
            "return %",
            "max drawdown %",
            "Sharpe",
            "trades",
            "win rate"
          ],
          board.entries.map((e) => [
            e.rank,
            e.name,
            e.owner,
            trader(e),
            number(e.equity),
            number(e.return_percent),
            number(e.max_drawdown_percent),
            number(e.sharpe),
            e.trades,
            e.win_rate === null ? "–" : `${number(e.win_rate * 100, 0)}%`
          ])
        )
      )
    })
  window.addEventListener("change", () => void load())
  show(into, h("h2", {}, "Arena"), h("form", { class: "arena" }, field("Window", window)), status, holder)
  void load()
}

const views: ReadonlyArray<[string, View]> = [
  ["Accounts", accountsView],
  ["Programs", programsView],
  ["Arena", arenaView],
  ["Ranking", rankingView],
  ["Signals", signalsView],
  ["Assistant", assistantView]
]

const start = () => {
  const token = sessionStorage.getItem(tokenKey)
  if (token === null) return loginView()
  const client = createClient({ baseUrl, token })
  const into = h("section", { id: "view" })
  const who = h("span", { class: "who" })
  const logout = h("button", { type: "button" }, "Log out")
  let leave: (() => void) | void
  const tabs = views.map(([name, view]) => {
    const tab = h("button", { type: "button" }, name)
    tab.addEventListener("click", () => {
      leave?.()
      for (const other of tabs) other.removeAttribute("aria-current")
      tab.setAttribute("aria-current", "page")
      leave = view(client, into)
    })
    return tab
  })
  logout.addEventListener("click", () => {
    leave?.()
    void client.users.logout().catch(() => undefined).finally(() => {
      sessionStorage.removeItem(tokenKey)
      start()
    })
  })
  show(root, h("header", {}, h("h1", {}, "Trading Platform"), h("nav", {}, tabs), who, logout), into)
  client.users.me().then(
    (user) => (who.textContent = user.username),
    (error) => {
      // A revoked or expired token: back to the login form.
      if (error instanceof TradingApiError && error.status === 401) {
        sessionStorage.removeItem(tokenKey)
        loginView()
      }
    }
  )
  tabs[1]!.click()
}

start()
