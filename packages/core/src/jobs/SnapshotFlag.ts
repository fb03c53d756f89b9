import { isMainThread, workerData } from "node:worker_threads"

// Plain functions, without Effect: the check thread imports this module too.

export const snapshotOff = "--no-node-snapshot"

/** The `workerData` field that tells a thread whether its process runs with `--no-node-snapshot`. */
export const snapshotOffField = "nodeSnapshotOff"

/**
 * Whether this process runs with `--no-node-snapshot` (isolated-vm needs it on Node 20 and later),
 * given on the command line or in `NODE_OPTIONS`. The flag holds for the whole process, but a
 * thread's `process.execArgv` is what the thread was given, and Node refuses this flag in a
 * thread's `execArgv` and `NODE_OPTIONS`: a thread started without the process's flags (the
 * sources' bundled entries, see `startWorkerThread`) is told in its `workerData`.
 */
export const nodeSnapshotOff = (): boolean =>
  process.execArgv.includes(snapshotOff) || (process.env["NODE_OPTIONS"] ?? "").includes(snapshotOff) ||
  (!isMainThread && (workerData as Record<string, unknown> | null)?.[snapshotOffField] === true)
