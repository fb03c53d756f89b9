import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Duration, Effect, Layer, Option, Queue } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { wokenLoop } from "../jobs/Leases.js"
import type { Trigger } from "../signals/Signal.js"
import { SignalEngine } from "../signals/SignalEngine.js"
import { BindingsRepo } from "./BindingsRepo.js"
import { OrderPlacement } from "./OrderPlacement.js"
import { automationJobKind, runsFor, RunsRepo } from "./RunsRepo.js"

/**
 * The schedule of bindings: every poll interval, the replica holding the `automation_scheduler`
 * lease queues the runs of each binding whose slot is due (one per symbol, or one for them all for
 * a portfolio binding, see `runsFor`), and moves the binding to its next slot (missed slots, after
 * downtime, run once, not once each). A slot's runs carry the key
 * `schedule:<binding>:<slot>:<symbol>` (`*` for a portfolio's), so a slot is queued once even if
 * two replicas saw it.
 * The same pass watches the take profits and stop losses of open positions (`OrderPlacement`).
 * While there is something to watch it passes every `watchInterval`; with nothing to watch it
 * sleeps until the next slot of an enabled binding, a change that may give it work (a position,
 * a resting or unsettled order, a binding: database triggers wake it at commit, see migration
 * 0031), or `pollInterval`, whichever comes first, so an idle server does not poll every second.
 */
export const AutomationSchedulerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options } = yield* PlatformConfig
    const bindings = yield* BindingsRepo
    const runs = yield* RunsRepo
    const wakeup = yield* JobWakeup
    const sql = yield* SqlClient.SqlClient
    const placement = yield* OrderPlacement

    const watchInterval = Duration.toMillis(options.watchInterval ?? Duration.seconds(1))

    const pass = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      for (const binding of yield* bindings.due(new Date(now))) {
        const slot = Date.parse(binding.next_run_at!)
        const step = binding.interval_minutes! * 60_000
        const next = slot + step * Math.max(1, Math.ceil((now - slot + 1) / step))
        // Moving the slot and queueing its runs stand or fall together.
        const queued = yield* sql.withTransaction(Effect.gen(function*() {
          if (!(yield* bindings.advance(binding.id, new Date(slot), new Date(next)))) return false
          yield* runs.enqueue(
            runsFor(binding, "schedule", (symbol) => `schedule:${binding.id}:${slot}:${symbol}`),
            new Date(now)
          )
          return true
        }))
        if (queued) yield* wakeup.wake(automationJobKind)
      }
      const watching = yield* placement.watchExits
      const slot = Option.match(yield* bindings.nextSlot(), {
        onNone: () => Infinity,
        onSome: ({ at }) => at.getTime()
      })
      return Math.min(watching ? now + watchInterval : Infinity, slot)
    })

    yield* wokenLoop("automation_scheduler", {
      poll: options.pollInterval,
      lease: options.lease,
      wakeOn: "automation_watch"
    }, pass)
  })
)

/**
 * Runs on signals: every trigger of a signal pool queues a run for each enabled binding that
 * listens to the pool and trades the trigger's symbol: of that symbol, or over all of them for a
 * portfolio binding. Every replica sees every trigger; the key
 * `signal:<binding>:<trigger>:<symbol>` makes each one run once.
 */
export const AutomationSignalTriggersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const engine = yield* SignalEngine
    const bindings = yield* BindingsRepo
    const runs = yield* RunsRepo
    const wakeup = yield* JobWakeup
    const triggers = yield* engine.subscribe

    const onTrigger = (trigger: Trigger) =>
      Effect.gen(function*() {
        const listening = (yield* bindings.listeningTo(trigger.pool_id)).filter((b) =>
          b.symbols.includes(trigger.symbol)
        )
        const queued = yield* runs.enqueue(
          listening.flatMap((binding) =>
            runsFor(binding, "signal", (symbol) => `signal:${binding.id}:${trigger.id}:${symbol}`, trigger.symbol)
          ),
          new Date(yield* Clock.currentTimeMillis)
        )
        if (queued.length > 0) yield* wakeup.wake(automationJobKind)
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning(`Runs for trigger ${trigger.id} could not be queued`, cause))
      )

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(triggers), onTrigger)))
  })
)
