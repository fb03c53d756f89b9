/**
 * The body of a backtest thread (see `BacktestThread.ts`): runs backtests one after another, each
 * loading its program in the thread's runtime and running the engine over the windows of candles
 * the main thread sends. It imports only relative paths, so it loads the same way from the sources
 * and from the build.
 */
import { Effect, Exit, Fiber, ManagedRuntime, Option, Queue, Schema, Stream } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { onThreadMessages } from "../jobs/ThreadEnd.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { selectedProgramRuntime } from "../sandbox/SelectedRuntime.js"
import { simulatedSymbol } from "../venues/SimulatedMarket.js"
import { type FundingFeed, fundingOf, runBacktest } from "./BacktestEngine.js"
import {
  type BacktestRun,
  type BacktestThreadInput,
  FromThread,
  outcomeOf,
  runEnd,
  type ThreadMarket,
  type ToThread
} from "./BacktestThreadProtocol.js"
import { unpackBars } from "./PackedBars.js"

const port = parentPort!
const { heartbeat, limits } = workerData as BacktestThreadInput
const { call, setBusy } = threadHeartbeat(heartbeat)

const feed = ({ funding, rules }: ThreadMarket): FundingFeed => {
  if (funding._tag === "Rates") return fundingOf(funding.rates)
  const market = simulatedSymbol(funding.seed, rules.symbol, funding.venue, funding.correlation)
  // The simulation walks the window minute by minute (seconds for a thousand daily bars on a busy
  // machine): the platform's own work, which the watchdog must not take for a stuck program.
  return (start, end) => {
    setBusy(false)
    try {
      return market?.fundingHistory(start, end) ?? []
    } finally {
      setBusy(true)
    }
  }
}
const post = (message: FromThread) => port.postMessage(Schema.encodeSync(FromThread)(message))

const inbox = Effect.runSync(Queue.unbounded<ToThread>())

/** The next message, asked for once the engine has stepped the previous window (which it acknowledges). */
const pull = Effect.suspend(() => {
  setBusy(false)
  post({ _tag: "Pull" })
  return Queue.take(inbox)
}).pipe(Effect.tap(() => setBusy(true)))

/** The windows of bars after the warm-up, until the end of the range. */
const windows = Stream.repeatEffectOption(
  Effect.flatMap(
    pull,
    (message) => message._tag === "Window" ? Effect.succeed(unpackBars(message.bars)) : Effect.fail(Option.none())
  )
)

// Built once for the thread's life and shared by its runs, as the thread is (see `backtestThreads`).
const programs = ManagedRuntime.make(selectedProgramRuntime(limits, call))

const backtest = ({ markets, run, settings }: BacktestRun) =>
  Effect.gen(function*() {
    const runtime = yield* ProgramRuntime
    setBusy(true)
    const loaded = yield* runtime.load(run)
    // The first answer is the warm-up (the main thread sends it first, maybe empty).
    const first = yield* pull
    const warmup = first._tag === "Warmup" ? unpackBars(first.bars) : []
    const terms = markets.map((market) => ({ rules: market.rules, funding: feed(market) }))
    return outcomeOf(yield* runBacktest(settings, windows, loaded, terms, warmup))
  }).pipe(Effect.scoped)

/** The run under way, if any: each `Run` message starts one once the one before has ended. */
let running: Fiber.RuntimeFiber<unknown, unknown> | undefined

// Asked to end (a run cancelled or taken over, the thread past its minute, the instance stopping),
// the run under way is interrupted, which disposes its isolate, then the runtime is released.
onThreadMessages(port, (message: ToThread) => {
  if (message._tag !== "Run") return Queue.unsafeOffer(inbox, message)
  const run = programs.runFork(backtest(message))
  running = run
  run.addObserver((exit) => {
    running = undefined
    setBusy(false)
    if (!Exit.isInterrupted(exit)) post(runEnd(exit))
  })
}, async () => {
  if (running !== undefined) await Effect.runPromise(Fiber.interrupt(running))
  await programs.dispose()
})
