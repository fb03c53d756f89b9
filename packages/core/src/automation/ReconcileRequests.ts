import { Effect, Queue } from "effect"
import type { AccountId } from "../accounts/Account.js"

/**
 * Asks for a live account to be reconciled with its venue now rather than at the next interval:
 * after a venue error left an order's fate unknown. The reconciliation takes what was asked.
 */
export class ReconcileRequests extends Effect.Service<ReconcileRequests>()("@trading-platform/core/ReconcileRequests", {
  effect: Effect.gen(function*() {
    // A request only hastens a pass: past 1,024 waiting the oldest are dropped, and the interval's pass covers them.
    const queue = yield* Queue.sliding<AccountId>(1_024)
    return {
      request: (account: AccountId) => Queue.offer(queue, account).pipe(Effect.asVoid),
      /** Waits for a request, then answers every account asked for so far. */
      take: Effect.zipWith(Queue.take(queue), Queue.takeAll(queue), (first, rest) => new Set([first, ...rest]))
    } as const
  })
}) {}
