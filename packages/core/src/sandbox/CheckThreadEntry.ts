/**
 * The body of a program check thread (see `CheckWorker.ts`): loads the program in QuickJS as a
 * run does and posts the outcome. It imports only relative paths, so it loads the same way from
 * the sources and from the build.
 */
import { Effect, Schema } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { CheckOutcome, type CheckThreadInput } from "./CheckWorker.js"
import { loadInSandbox } from "./Sandbox.js"

const { code, heartbeat, limits } = workerData as CheckThreadInput
const { call, setBusy } = threadHeartbeat(heartbeat)

setBusy(true)
void Effect.runPromise(
  loadInSandbox(limits, call, code, 0).pipe(
    Effect.scoped,
    Effect.as({ _tag: "Loaded" as const }),
    Effect.merge,
    Effect.flatMap(Schema.encode(CheckOutcome))
  )
).then((outcome) => parentPort!.postMessage(outcome))
