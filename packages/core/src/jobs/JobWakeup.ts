import { type Duration, Effect, Queue } from "effect"

/**
 * Wakes an idle worker of this instance when a job of its kind is queued here, so a job starts
 * without waiting for the next poll. Jobs queued by other instances are found by polling.
 */
export class JobWakeup extends Effect.Service<JobWakeup>()("@trading-platform/core/JobWakeup", {
  effect: Effect.map(Effect.cachedFunction((_kind: string) => Queue.sliding<void>(1)), (queueOf) => ({
    wake: (kind: string) => Effect.asVoid(Effect.flatMap(queueOf(kind), (queue) => Queue.offer(queue, undefined))),
    /** Waits for a wake-up of `kind` or the poll interval, whichever comes first. */
    idle: (kind: string, poll: Duration.DurationInput) =>
      Effect.flatMap(queueOf(kind), (queue) => Effect.ignore(Effect.timeout(Queue.take(queue), poll)))
  }))
}) {}
