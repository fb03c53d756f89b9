import { useEffect } from "preact/hooks"
import { ErrorText, Table, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Program = Awaited<ReturnType<PromiseClient["programs"]["get"]>>
type BiasCheck = Awaited<ReturnType<PromiseClient["biasChecks"]["get"]>>
type Difference = BiasCheck["lookahead"]["difference"]

const pending = (check: BiasCheck) => check.status === "queued" || check.status === "running"
const day = (instant: string) => instant.slice(0, 10)

/** Where a run departs from its reference, in the API's words, with when and in which backtest. */
const differenceText = (difference: Difference) =>
  difference === null
    ? ""
    : `${difference.detail} (at ${difference.time.slice(0, 16)}, backtest #${difference.backtest_id})`

const CheckResult = ({ check }: { check: BiasCheck }) => (
  <section class="bias-check" data-status={check.status}>
    <h4>
      Check #{check.id}: {check.symbol} {check.timeframe}, {day(check.start)} to {day(check.end)}: {check.status}
      {check.current ? "" : " (the code has changed since)"}
    </h4>
    {check.error !== null && <p class="error">{check.error}</p>}
    <Table
      class="verdicts"
      headers={["check", "verdict", "details"]}
      rows={[
        [
          "lookahead",
          check.lookahead.verdict,
          <span class="text">
            {differenceText(check.lookahead.difference) ||
              `runs cut at ${check.lookahead.cuts.map((c) => c.end.slice(0, 16)).join(", ")} against the full run`}
          </span>
        ],
        [
          "warm-up",
          check.warmup.verdict,
          <span class="text">
            {differenceText(check.warmup.difference) ||
              `${check.warmup.warmup_bars} bars of history against ${check.warmup.reference_warmup_bars}`}
          </span>
        ]
      ]}
    />
  </section>
)

/** The program's latest bias checks with their verdicts, polled while one runs; `round` changes when a new one is asked for. */
export const BiasChecks = ({ client, program, round }: { client: PromiseClient; program: Program; round: number }) => {
  const checks = useLoad(
    () => client.biasChecks.list({ path: { id: program.id }, urlParams: { limit: 3 } }),
    [program.id, round]
  )
  const list = checks.value?.checks ?? []
  useEffect(() => {
    if (!list.some(pending)) return
    const next = setTimeout(checks.reload, 1000)
    return () => clearTimeout(next)
  }, [checks.value])
  return (
    <section class="bias-checks">
      <h3>Bias checks</h3>
      <ErrorText error={checks.error} />
      {checks.value !== undefined && list.length === 0 && (
        <p class="muted">None yet: “Check for bias” checks the program on the backtest form’s market and parameters.</p>
      )}
      {list.map((check) => <CheckResult key={check.id} check={check} />)}
    </section>
  )
}
