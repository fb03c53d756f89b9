import { Effect, Option } from "effect"
import { NotFound } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import type { ProgramId } from "../programs/Program.js"
import { Programs } from "../programs/Programs.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { timeframeMillis } from "../venues/Venue.js"
import type { BacktestRequest } from "./Backtest.js"
import { backtestRange, Backtests } from "./Backtests.js"
import {
  BiasCheck,
  biasCheckDefaults,
  type BiasCheckId,
  BiasCheckList,
  type BiasCheckRequest,
  lookaheadCuts,
  maxBiasCheckBars,
  minBiasCheckBars,
  referenceWarmup
} from "./BiasCheck.js"
import { type BiasCheckRow, BiasChecksRepo, type BiasCheckVerdict } from "./BiasChecksRepo.js"
import { BiasCheckVerdicts, codeHash } from "./BiasCheckVerdicts.js"

const toCheck = (row: BiasCheckRow, verdict: BiasCheckVerdict, current: boolean) =>
  new BiasCheck({
    id: row.id,
    program_id: row.program_id,
    status: verdict.status,
    current,
    symbol: row.symbol,
    exchange: row.exchange,
    timeframe: row.timeframe,
    start: row.start_at,
    end: row.end_at,
    params: row.params,
    lookahead: {
      ...verdict.lookahead,
      backtest_id: row.runs.full,
      cuts: row.runs.cuts.map(({ end, id }) => ({ end: new Date(end).toISOString(), backtest_id: id }))
    },
    warmup: {
      ...verdict.warmup,
      backtest_id: row.runs.warmup,
      warmup_bars: row.warmup_bars,
      reference_warmup_bars: referenceWarmup
    },
    error: verdict.error,
    created_at: row.created_at
  })

/**
 * Bias checks of programs: each queues ordinary backtests of the program (one snapshot of its
 * code) and compares their fills when they have completed; see docs/programs.md#bias-checks.
 */
export class BiasChecks extends Effect.Service<BiasChecks>()("@trading-platform/core/BiasChecks", {
  effect: Effect.gen(function*() {
    const repo = yield* BiasChecksRepo
    const verdicts = yield* BiasCheckVerdicts
    const backtests = yield* Backtests
    const programs = yield* Programs

    const submit = (caller: CurrentUserShape, programId: ProgramId, request: BiasCheckRequest) =>
      Effect.gen(function*() {
        const input = { ...biasCheckDefaults, ...request }
        const { end, start } = yield* backtestRange(input, maxBiasCheckBars)
        const step = timeframeMillis[input.timeframe]
        const first = Math.ceil(start / step) * step
        const bars = Math.ceil((end - first) / step)
        if (bars < minBiasCheckBars) {
          return yield* invalidField("end", `must be at least ${minBiasCheckBars} bars of the timeframe after start`)
        }
        // Cuts on bar boundaries, so each cut run ends on whole bars the full run also has.
        const cuts = lookaheadCuts.map((fraction) => first + Math.round(bars * fraction) * step)
        const run = (runEnd: string, warmup_bars: number): BacktestRequest => ({
          symbol: input.symbol,
          exchange: input.exchange,
          timeframe: input.timeframe,
          start: input.start,
          end: runEnd,
          params: input.params,
          warmup_bars
        })
        const row = yield* backtests.submitAll(
          caller,
          programId,
          [
            run(input.end, referenceWarmup),
            ...cuts.map((cut) => run(new Date(cut).toISOString(), referenceWarmup)),
            run(input.end, input.warmup_bars)
          ],
          (program, runs) =>
            Effect.flatMap(now, (at) =>
              repo.insert({
                user_id: caller.id,
                program_id: programId,
                code_hash: codeHash(program.code),
                symbol: input.symbol,
                exchange: input.exchange,
                timeframe: input.timeframe,
                start_at: new Date(start),
                end_at: new Date(end),
                // As the runs have them: completed with the declared defaults.
                params: runs[0]!.params,
                warmup_bars: input.warmup_bars,
                runs: {
                  full: runs[0]!.id,
                  cuts: cuts.map((cut, i) => ({ end: cut, id: runs[i + 1]!.id })),
                  warmup: runs[cuts.length + 1]!.id
                },
                now: at
              }))
        )
        return toCheck(row, yield* verdicts.verdictOf(row), true)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("BiasChecks.submit", { attributes: { userId: caller.id, programId } })
      )

    const get = (caller: CurrentUserShape, programId: ProgramId, id: BiasCheckId) =>
      Effect.gen(function*() {
        const program = yield* programs.owned(caller, programId)
        const row = Option.getOrUndefined(yield* repo.findById(id))
        if (row === undefined || row.program_id !== programId) {
          return yield* new NotFound({ error: `Bias check ${id} not found` })
        }
        return toCheck(row, yield* verdicts.verdictOf(row), row.code_hash === codeHash(program.code))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("BiasChecks.get", { attributes: { userId: caller.id, programId, checkId: id } })
      )

    const list = (caller: CurrentUserShape, programId: ProgramId, page: Pagination) =>
      Effect.gen(function*() {
        const program = yield* programs.owned(caller, programId)
        const rows = yield* repo.ofProgram({ program_id: programId, ...pageOf(page) })
        const hash = codeHash(program.code)
        const checks = yield* Effect.forEach(rows, (row) =>
          Effect.map(verdicts.verdictOf(row), (verdict) => toCheck(row, verdict, row.code_hash === hash)))
        return new BiasCheckList({ checks })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("BiasChecks.list", { attributes: { userId: caller.id, programId } })
      )

    return { submit, get, list } as const
  }),
  dependencies: [BiasChecksRepo.Default, BiasCheckVerdicts.Default]
}) {}
