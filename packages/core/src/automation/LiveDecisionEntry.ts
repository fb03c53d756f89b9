/**
 * The body of a decision thread (see `makeDecisionThreads`): for each request, loads the program
 * in a QuickJS instance of its own, decides at the last bar and posts the answer. It imports only
 * relative paths, so it loads the same way from the sources and from the build.
 */
import { Cause, Effect, Either, Exit, Schema } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { threadHeartbeat } from "../jobs/Heartbeat.js"
import { onThreadMessages } from "../jobs/ThreadEnd.js"
import { ProgramRunError } from "../sandbox/Decision.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { selectedProgramRuntime } from "../sandbox/SelectedRuntime.js"
import { decideAtLastBar, type DecisionRequest, type DecisionThreadInput, FromDecisionThread } from "./LiveDecision.js"

const port = parentPort!
const { heartbeat, limits } = workerData as DecisionThreadInput & { readonly heartbeat: SharedArrayBuffer }
const { call, setBusy } = threadHeartbeat(heartbeat)
const post = (message: FromDecisionThread) => port.postMessage(Schema.encodeSync(FromDecisionThread)(message))
const runtime = selectedProgramRuntime(limits, call)

const decide = ({ account, bars, run }: DecisionRequest) =>
  Effect.gen(function*() {
    const decider = yield* Effect.flatMap(ProgramRuntime, (r) => r.load(run))
    // The decider throws the program's failure; anything else it throws is a defect of this thread.
    return yield* Effect.suspend(() => {
      try {
        return Effect.succeed(decideAtLastBar(decider, bars, account))
      } catch (e) {
        return e instanceof ProgramRunError ? Effect.fail(e) : Effect.die(e)
      }
    })
  }).pipe(Effect.scoped, Effect.provide(runtime))

// The main thread sends one request at a time and waits for its answer.
onThreadMessages(port, (request: DecisionRequest) => {
  setBusy(true)
  void Effect.runPromiseExit(decide(request)).then((exit) => {
    setBusy(false)
    post(Exit.match(exit, {
      onSuccess: (decisions): FromDecisionThread => ({ _tag: "Decided", decisions }),
      onFailure: (cause): FromDecisionThread =>
        Either.match(Cause.failureOrCause(cause), {
          onLeft: (error) => ({ _tag: "Failed", error }),
          onRight: (defect) => ({ _tag: "Crashed", message: Cause.pretty(defect).split("\n")[0] ?? "" })
        })
    }))
  })
})
