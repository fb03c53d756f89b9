import { useEffect, useState } from "preact/hooks"
import { ErrorText, number, Table, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

interface Trigger {
  readonly fired_at: string
  readonly pool_name: string
  readonly symbol: string
  readonly values: ReadonlyArray<{ readonly signal_name: string; readonly value: number }>
}

/** The signal pools and the latest triggers; new ones arrive live over the market-intelligence stream. */
export const SignalsView = ({ client }: { client: PromiseClient }) => {
  const listing = useLoad(() => client.signals.list(), [])
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
  return (
    <section>
      <h2>Signal pools</h2>
      <ErrorText error={listing.error} />
      {listing.value !== undefined && (listing.value.pools.length === 0
        ? <p class="muted">No signal pools yet (create them through the API: docs/signals.md).</p>
        : (
          <Table
            headers={["pool", "venue", "symbols", "logic", "enabled"]}
            rows={listing.value.pools.map((
              p
            ) => [p.pool_name, p.exchange, p.symbols.join(", "), p.logic, String(p.enabled)])}
          />
        ))}
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
