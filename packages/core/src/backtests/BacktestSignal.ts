import { Duration, Effect, Queue } from "effect"

/**
 * Wakes an idle worker of this instance when a job is queued here, so a job starts without waiting
 * for the next poll. Jobs queued by other instances are found by polling.
 */
export class BacktestSignal extends Effect.Service<BacktestSignal>()("@trading-platform/core/BacktestSignal", {
  effect: Effect.map(Queue.sliding<void>(1), (queue) => ({
    wake: Effect.asVoid(Queue.offer(queue, undefined)),
    /** Waits for a wake-up or the poll interval, whichever comes first. */
    idle: (poll: Duration.DurationInput) => Effect.ignore(Effect.timeout(Queue.take(queue), poll))
  }))
}) {}
