/**
 * The body of a trial thread (see `TrialThread.ts`): keeps one optimisation's bars and a loaded
 * program runtime, and runs the trials the main thread sends, one at a time, each with a fresh
 * instance of the program. It imports only relative paths, so it loads the same way from the
 * sources and from the build.
 */
import { Effect, ManagedRuntime, Schema, Stream } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { runBacktest } from "../backtests/BacktestEngine.js"
import { downsample, outcomeOf, runEnd } from "../backtests/BacktestThreadProtocol.js"
import { unpackBars } from "../backtests/PackedBars.js"
import { sharedFunding } from "../backtests/ThreadFunding.js"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { onThreadMessages } from "../jobs/ThreadEnd.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { selectedProgramRuntime } from "../sandbox/SelectedRuntime.js"
import {
  type TrialFromThread,
  TrialFromThread as FromThread,
  type TrialMessage,
  type TrialThreadInput
} from "./TrialThreadProtocol.js"

const port = parentPort!
const { heartbeat, limits, markets, run, settings, ...input } = workerData as TrialThreadInput
const bars = unpackBars(input.bars)
const { call, setBusy } = threadHeartbeat(heartbeat)
const times = bars[0]!
// Every trial's bars lie within these: the funding over them is computed once (the simulation's walks minutes).
const first = times[0]!.time
const last = times.at(-1)!.time + settings.barMillis
const terms = markets.map((market) => ({ rules: market.rules, funding: sharedFunding(market, first, last, setBusy) }))
// The runtime serves this one program's trials, each in a fresh context of the same engine instance.
const runtime = ManagedRuntime.make(selectedProgramRuntime(limits, call, "oneProgram"))

/**
 * The points of a search trial's curve: its returns between them are the periods the probability
 * of backtest overfitting cuts into blocks. The trials of a fold run the same bars, so sampling by
 * index gives every one of them the same timestamps.
 */
const searchCurvePoints = 256

/** The index of the first bar at or after `time`. */
const indexAt = (time: number) => {
  let low = 0
  let high = times.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (times[mid]!.time < time) low = mid + 1
    else high = mid
  }
  return low
}

// Slices of the shared arrays: the candles themselves are not copied.
const slice = (from: number, to: number) => bars.map((candles) => candles.slice(from, to))

const trial = (message: TrialMessage) =>
  Effect.gen(function*() {
    const from = indexAt(message.start)
    const to = indexAt(message.end)
    const loaded = yield* (yield* ProgramRuntime).load({ ...run, params: message.params })
    const result = yield* runBacktest(
      settings,
      Stream.make(slice(from, to)),
      loaded,
      terms,
      slice(Math.max(0, from - message.warmup), from)
    )
    const outcome = outcomeOf(result)
    return message.full
      ? outcome
      : { ...outcome, equity_curve: downsample(result.equity_curve, searchCurvePoints), trades: [], fills: [] }
  }).pipe(Effect.scoped)

const post = (message: TrialFromThread) => port.postMessage(Schema.encodeSync(FromThread)(message))

onThreadMessages(port, (message: TrialMessage) => {
  setBusy(true)
  void runtime.runPromiseExit(trial(message)).then((exit) => {
    setBusy(false)
    post(runEnd(exit))
  })
}, () => runtime.dispose())
