/**
 * The web console: one page of Preact components, talking to the API only through the Promise
 * client. The view shown is in the address's fragment (`#arena`), so a reload keeps it.
 */
import { TradingApiError } from "@trading-platform/client"
import { type FunctionComponent, render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { AccountsView } from "./AccountsView.js"
import { ArenaView } from "./ArenaView.js"
import { AssistantView } from "./AssistantView.js"
import "./console.css"
import { LoginView } from "./LoginView.js"
import { MarketView } from "./MarketView.js"
import { NewsView } from "./NewsView.js"
import { ProgramsView } from "./ProgramsView.js"
import { RankingView } from "./RankingView.js"
import { dropSession, type PromiseClient, sessionClient } from "./Session.js"
import { SessionsView } from "./SessionsView.js"
import { SignalsView } from "./SignalsView.js"

const views: ReadonlyArray<[string, FunctionComponent<{ client: PromiseClient }>]> = [
  ["Programs", ProgramsView],
  ["Arena", ArenaView],
  ["Market", MarketView],
  ["Accounts", AccountsView],
  ["Ranking", RankingView],
  ["Signals", SignalsView],
  ["News", NewsView],
  ["Assistant", AssistantView]
]

// Reached from the header, beside the user's name, rather than the views' bar.
const accountViews: typeof views = [["Sessions", SessionsView]]

const viewOf = (hash: string) =>
  [...views, ...accountViews].find(([name]) => `#${name.toLowerCase()}` === hash) ?? views[0]!

const Console = ({ client, onLogout }: { client: PromiseClient; onLogout: () => void }) => {
  const [[name, View], setView] = useState(() => viewOf(location.hash))
  const [who, setWho] = useState("")
  useEffect(() => {
    client.users.me().then((user) => setWho(user.username), (error) => {
      // A revoked or expired token: back to the login form.
      if (error instanceof TradingApiError && error.status === 401) onLogout()
    })
    const follow = () => setView(viewOf(location.hash))
    addEventListener("hashchange", follow)
    return () => removeEventListener("hashchange", follow)
  }, [client])
  const logout = () => void client.users.logout().catch(() => undefined).finally(onLogout)
  return (
    <>
      <header>
        <h1>Trading Platform</h1>
        <nav aria-label="Views">
          {views.map(([other]) => (
            <a href={`#${other.toLowerCase()}`} aria-current={other === name ? "page" : undefined}>{other}</a>
          ))}
        </nav>
        <span class="who">{who}</span>
        <a href="#sessions" aria-current={name === "Sessions" ? "page" : undefined}>Sessions</a>
        <button type="button" onClick={logout}>Log out</button>
      </header>
      <div id="view">
        <View key={name} client={client} />
      </div>
      {/* lightweight-charts' licence notice asks for this credit and link, in place of its logo on each chart. */}
      <footer class="muted">
        Charts by <a href="https://www.tradingview.com/">TradingView Lightweight Charts™</a>
      </footer>
    </>
  )
}

const App = () => {
  const [client, setClient] = useState(() => sessionClient())
  return client === undefined
    ? <LoginView onSession={() => setClient(sessionClient())} />
    : (
      <Console
        client={client}
        onLogout={() => {
          dropSession()
          setClient(undefined)
        }}
      />
    )
}

render(<App />, document.getElementById("app")!)
