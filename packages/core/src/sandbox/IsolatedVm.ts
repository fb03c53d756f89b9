import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { isMainThread } from "node:worker_threads"
import { nodeSnapshotOff, snapshotOff } from "../jobs/SnapshotFlag.js"

// Plain functions, without Effect: the check thread imports this module too.

/** The part of `isolated-vm`'s API the V8 runtime uses (typed here: the addon is optional). */
export interface IvmReference {
  readonly typeof: string
  applySync(receiver: undefined, args: ReadonlyArray<unknown>, options?: object): unknown
  getSync(property: string, options?: object): unknown
  derefInto(): unknown
  release(): void
}
export interface IvmModule {
  instantiateSync(context: IvmContext, resolve: (specifier: string) => never): void
  evaluateSync(options?: { timeout?: number }): unknown
  readonly namespace: IvmReference
  release(): void
}
export interface IvmContext {
  evalSync(code: string, options?: { reference?: boolean; filename?: string; timeout?: number }): unknown
  release(): void
}
export interface IvmIsolate {
  readonly cpuTime: bigint
  readonly isDisposed: boolean
  createContextSync(): IvmContext
  compileModuleSync(code: string, options?: { filename?: string }): IvmModule
  dispose(): void
}
export interface IsolatedVm {
  readonly Isolate: new(options: { memoryLimit: number; onCatastrophicError?: (message: string) => void }) => IvmIsolate
}

const kept: Array<unknown> = []

/**
 * Keeps an addon object (an isolate, context, module or reference, released or disposed) reachable
 * until a worker thread ends, and answers it. isolated-vm's objects run a callback when collected
 * that needs the addon's state for the thread; when one is still uncollected garbage as the
 * thread ends, V8's last collection runs that callback after the state is gone, and the addon's
 * assertion (`IsolateEnvironment::GetCurrent`) aborts the whole process (seen when a thread was
 * terminated right after a call into an isolate; Node's issue 51129 is the same race). Reachable
 * objects are not collected then, so none of them can. The main thread does not end that way.
 */
export const keepUntilExit = <A>(handle: A): A => {
  if (!isMainThread) kept.push(handle)
  return handle
}

let loaded: { readonly ivm: IsolatedVm } | { readonly reason: string } | undefined

/**
 * The addon's package for this Node: each line of `isolated-vm` builds for some Node versions only,
 * so core depends on two, both optional (`isolated-vm` 5 for Node 20, and 7 as `isolated-vm-7` for
 * Node 24 and later; npm skips the one whose `engines` exclude the Node installing it).
 */
const addonName = () =>
  Number(process.versions.node.split(".")[0]) >= 24 ? ["isolated", "vm", "7"].join("-") : ["isolated", "vm"].join("-")

/**
 * `isolated-vm`, or why it cannot be used here: it is an optional native addon (built on `npm
 * install` where a compiler is found, or its prebuilt binary), and on Node 20 and later it needs
 * node started with `--no-node-snapshot` (a process-wide flag, which a thread learns of as
 * `nodeSnapshotOff` says). Loaded through `require` of a name the bundlers do not follow, from `node_modules`.
 */
export const loadIsolatedVm = (): { readonly ivm: IsolatedVm } | { readonly reason: string } => {
  if (loaded !== undefined) return loaded
  if (!nodeSnapshotOff()) {
    return loaded = {
      reason:
        `node was started without ${snapshotOff}, which isolated-vm needs (add it, or set NODE_OPTIONS=${snapshotOff})`
    }
  }
  let ivm: IsolatedVm
  try {
    const here = typeof __filename === "string" ? pathToFileURL(__filename) : new URL(import.meta.url)
    ivm = createRequire(here)(addonName()) as IsolatedVm
  } catch (e) {
    return loaded = { reason: `the ${addonName()} addon does not load (${firstLine(e)})` }
  }
  // An addon built for another V8 may load and still fail to make an isolate: one is made here once.
  try {
    const isolate = keepUntilExit(new ivm.Isolate({ memoryLimit: 8 }))
    try {
      keepUntilExit(isolate.createContextSync()).evalSync("1")
    } finally {
      isolate.dispose()
    }
  } catch (e) {
    return loaded = { reason: `isolated-vm cannot make an isolate here (${firstLine(e)})` }
  }
  return loaded = { ivm }
}

const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0]
