/**
 * The body of a backtest thread (see `BacktestThread.ts`): loads the program in QuickJS and runs
 * the engine over the windows of candles the main thread sends. It imports only relative paths,
 * so it loads the same way from the sources and from the build.
 */
import { Cause, Effect, Either, Exit, Fiber, Option, Queue, Schema, Stream } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { onThreadMessages } from "../jobs/ThreadEnd.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { selectedProgramRuntime } from "../sandbox/SelectedRuntime.js"
import { simulatedSymbol } from "../venues/SimulatedMarket.js"
import { type FundingFeed, fundingOf, runBacktest } from "./BacktestEngine.js"
import {
  type BacktestThreadInput,
  FromThread,
  outcomeOf,
  type ThreadMarket,
  type ToThread
} from "./BacktestThreadProtocol.js"
import { unpackBars } from "./PackedBars.js"

const port = parentPort!
const { heartbeat, limits, markets, run, settings } = workerData as BacktestThreadInput
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

const backtest = Effect.gen(function*() {
  const runtime = yield* ProgramRuntime
  setBusy(true)
  const loaded = yield* runtime.load(run)
  // The first answer is the warm-up (the main thread sends it first, maybe empty).
  const first = yield* pull
  const warmup = first._tag === "Warmup" ? unpackBars(first.bars) : []
  const terms = markets.map((market) => ({ rules: market.rules, funding: feed(market) }))
  return outcomeOf(yield* runBacktest(settings, windows, loaded, terms, warmup))
}).pipe(
  Effect.scoped,
  Effect.provide(selectedProgramRuntime(limits, call))
)

const running = Effect.runFork(backtest)
// Asked to end before the run has (cancelled, or the instance stops), the run is interrupted, which disposes its isolate.
onThreadMessages(
  port,
  (message: ToThread) => Queue.unsafeOffer(inbox, message),
  () => Effect.runPromise(Fiber.interrupt(running))
)
running.addObserver((exit) => {
  if (Exit.isInterrupted(exit)) return
  post(Exit.match(exit, {
    onSuccess: (outcome): FromThread => ({ _tag: "Done", outcome }),
    onFailure: (cause): FromThread =>
      Either.match(Cause.failureOrCause(cause), {
        onLeft: (error) => ({ _tag: "Failed", error }),
        onRight: (defect) => ({ _tag: "Crashed", message: Cause.pretty(defect).split("\n")[0] ?? "" })
      })
  }))
  // Nothing more to take: the thread exits on its own, once isolated-vm has torn its isolate down.
  port.close()
})
