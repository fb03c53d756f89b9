import type { MessagePort } from "node:worker_threads"

// Plain functions, without Effect: every thread entry imports this module.

/**
 * What the main thread posts when it is done with a thread (see `startWorkerThread`): the thread
 * ends the work it is doing, releases what it holds (disposing its isolates) and closes its port,
 * so that it exits on its own once isolated-vm has torn its isolates down.
 */
export const endThread = "end thread"

/**
 * The thread's side: `handle` takes every message but `endThread`, which runs `end` (releasing what
 * the thread holds) and then closes the port.
 */
export const onThreadMessages = <A>(
  port: MessagePort,
  handle: (message: A) => void,
  end: () => Promise<unknown> | void = () => {}
) =>
  port.on("message", (message: A | typeof endThread) => {
    if (message !== endThread) return handle(message)
    void Promise.resolve().then(end).finally(() => port.close())
  })
