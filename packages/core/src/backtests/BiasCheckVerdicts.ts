import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { BiasCheckRequired } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import type { ProgramRow } from "../programs/Programs.js"
import type { BacktestFill } from "./Backtest.js"
import { BacktestsRepo, type BacktestViewRow } from "./BacktestsRepo.js"
import type { BiasDifference } from "./BiasCheck.js"
import { type BiasCheckRow, BiasChecksRepo, type BiasCheckVerdict } from "./BiasChecksRepo.js"
import { type FillDivergence, lookaheadDivergence, warmupDivergence } from "./BiasComparison.js"

/** What a check speaks for: the SHA-256 of the program's code. */
export const codeHash = (code: string) => createHash("sha256").update(code).digest("hex")

const iso = (ms: number) => new Date(ms).toISOString()

const described = (fill: BacktestFill | undefined) =>
  fill === undefined
    ? "has no fill"
    : `${
      fill.side === "buy" ? "bought" : "sold"
    } ${fill.quantity} ${fill.symbol} at ${fill.price} (${fill.reason}) at ${iso(fill.time)}`

const difference = (
  run: BacktestViewRow,
  divergence: FillDivergence,
  expectedRun: string,
  foundRun: string
): BiasDifference => ({
  backtest_id: run.id,
  time: iso(Math.min(divergence.expected?.time ?? Infinity, divergence.found?.time ?? Infinity)),
  expected: divergence.expected ?? null,
  found: divergence.found ?? null,
  detail: `${expectedRun} ${described(divergence.expected)}; ${foundRun} ${described(divergence.found)}${
    divergence.fields[0] === "fill" ? "" : ` (differing: ${divergence.fields.join(", ")})`
  }`
})

const pending = { verdict: "pending", difference: null } as const

/** The verdict of a check whose runs have all completed, in the order the check lists them. */
const judged = (check: BiasCheckRow, [full, ...rest]: ReadonlyArray<BacktestViewRow>): BiasCheckVerdict => {
  const fills = (run: BacktestViewRow) => run.result?.fills ?? []
  const cutRuns = rest.slice(0, check.runs.cuts.length)
  const warmupRun = rest[check.runs.cuts.length]!
  const lookahead = check.runs.cuts.flatMap(({ end }, i) => {
    const divergence = lookaheadDivergence(fills(full!), fills(cutRuns[i]!), end)
    return divergence === undefined
      ? []
      : [difference(cutRuns[i]!, divergence, "the full run", `the run cut at ${iso(end)}`)]
  })[0]
  const lookaheadOutcome = {
    verdict: lookahead === undefined ? "passed" : "failed",
    difference: lookahead ?? null
  } as const
  // Where the data begins too late for the full run to get more history than the short one, the two runs are the same run.
  const [longer, shorter] = [full!.result?.warmed_up_bars ?? 0, warmupRun.result?.warmed_up_bars ?? 0]
  if (longer <= shorter) {
    return {
      status: lookahead === undefined ? "error" : "failed",
      lookahead: lookaheadOutcome,
      warmup: { verdict: "error", difference: null },
      error: `The data holds only ${longer} bars before start, not more than warmup_bars (${check.warmup_bars}): ` +
        "the warm-up check compared nothing; start later"
    }
  }
  const divergence = warmupDivergence(fills(full!), fills(warmupRun))
  const warmup = divergence === undefined ? undefined : difference(
    warmupRun,
    divergence,
    `with ${longer} bars of history the run`,
    `with ${shorter} it`
  )
  return {
    status: lookahead === undefined && warmup === undefined ? "passed" : "failed",
    lookahead: lookaheadOutcome,
    warmup: { verdict: warmup === undefined ? "passed" : "failed", difference: warmup ?? null },
    error: null
  }
}

const broken = (error: string): BiasCheckVerdict => ({
  status: "error",
  lookahead: { verdict: "error", difference: null },
  warmup: { verdict: "error", difference: null },
  error
})

/**
 * The verdicts of bias checks from their runs, and the rule that a live binding needs a passed one.
 * Apart from the checks' submission, so automation can ask it without the backtest service.
 */
export class BiasCheckVerdicts extends Effect.Service<BiasCheckVerdicts>()("@trading-platform/core/BiasCheckVerdicts", {
  effect: Effect.gen(function*() {
    const repo = yield* BiasChecksRepo
    const backtests = yield* BacktestsRepo
    const { automation } = yield* PlatformConfig

    /**
     * Where a check is: its stored verdict, or one judged from its runs (stored once they have all
     * ended, so the check outlives them), or `queued`/`running` while some have not.
     */
    const verdictOf = (check: BiasCheckRow) =>
      Effect.gen(function*() {
        if (check.verdict !== null) return check.verdict
        const ids = [check.runs.full, ...check.runs.cuts.map((cut) => cut.id), check.runs.warmup]
        // Their states first: a client polls a check while its runs go on, and a finished run's result can be megabytes.
        const states = yield* backtests.states(ids)
        const gone = ids.find((id) => !states.some((state) => state.id === id))
        const ended = states.find((run) => run.status === "failed" || run.status === "cancelled")
        let verdict: BiasCheckVerdict
        if (gone !== undefined) verdict = broken(`Backtest ${gone} no longer exists`)
        else if (ended !== undefined) {
          verdict = broken(`Backtest ${ended.id} ${ended.status}${ended.error === null ? "" : `: ${ended.error}`}`)
        } else if (states.every((run) => run.status === "completed")) {
          const found = yield* Effect.forEach(ids, (id) => backtests.findById(id))
          const purged = ids.find((_, i) => Option.isNone(found[i]!))
          verdict = purged === undefined
            ? judged(check, found.flatMap(Option.toArray))
            : broken(`Backtest ${purged} no longer exists`)
        } else {
          return {
            status: states.every((run) => run.status === "queued") ? "queued" : "running",
            lookahead: pending,
            warmup: pending,
            error: null
          } satisfies BiasCheckVerdict
        }
        yield* repo.settle({ id: check.id, verdict })
        return verdict
      }).pipe(withRequestSpan("BiasCheckVerdicts.verdictOf", { attributes: { checkId: check.id } }))

    /**
     * Fails with `bias_check_required` unless a check of the program's current code has passed
     * (its latest ones are judged, newest first); nothing when REQUIRE_BIAS_CHECK is false.
     */
    const requirePassed = (program: ProgramRow) =>
      Effect.gen(function*() {
        if (!(automation.requireBiasCheck ?? true)) return
        const checks = yield* repo.ofProgram({
          program_id: program.id,
          code_hash: codeHash(program.code),
          limit: 10,
          offset: 0
        })
        for (const check of checks) {
          if ((yield* verdictOf(check)).status === "passed") return
        }
        return yield* new BiasCheckRequired({
          error: `Program ${program.id} has no passed bias check of its current code: ` +
            `POST /api/programs/${program.id}/checks and bind it to this account once the check has passed`,
          program_id: program.id
        })
      }).pipe(withRequestSpan("BiasCheckVerdicts.requirePassed", { attributes: { programId: program.id } }))

    return { verdictOf, requirePassed } as const
  }),
  dependencies: [BiasChecksRepo.Default, BacktestsRepo.Default]
}) {}
