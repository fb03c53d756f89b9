import { Effect } from "effect"
import { call } from "./TestServer.js"

/** Polls an insight task until it is no longer queued or running; answers the last reply. */
export const insightSettled = (token: string, taskId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      const reply = yield* call("GET", `/api/ai/insight/${taskId}`, { token })
      if (reply.body.status !== "queued" && reply.body.status !== "running") return reply
      // The worker runs on real I/O; give it a moment of real time.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
    throw new Error(`insight ${taskId} did not finish`)
  })
