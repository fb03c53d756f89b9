import { Duration, Effect, Queue } from "effect"

/**
 * Wakes an idle run worker of this instance when runs are queued here (a manual run, a schedule
 * slot, a signal), so they start without waiting for the next poll; other instances poll.
 */
export class AutomationSignal extends Effect.Service<AutomationSignal>()("@trading-platform/core/AutomationSignal", {
  effect: Effect.map(Queue.sliding<void>(1), (queue) => ({
    wake: Effect.asVoid(Queue.offer(queue, undefined)),
    /** Waits for a wake-up or the poll interval, whichever comes first. */
    idle: (poll: Duration.DurationInput) => Effect.ignore(Effect.timeout(Queue.take(queue), poll))
  }))
}) {}
