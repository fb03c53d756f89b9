import { Data, Effect } from "effect"
import { randomBytes } from "node:crypto"
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { join, resolve } from "node:path"

/** The embedded data directory cannot be used: another process holds it, or its permissions cannot be restricted. */
export class DataDirectoryError extends Data.TaggedError("DataDirectoryError")<{ readonly message: string }> {}

const lockName = "server.lock"

const errorCode = (e: unknown) => (e as NodeJS.ErrnoException).code

/** Whether a process with this pid is running (EPERM: it runs under another user). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errorCode(e) === "EPERM"
  }
}

/** The pid in a lock file; undefined when the file is gone or does not hold one. */
const holderOf = (file: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch (e) {
    if (errorCode(e) === "ENOENT") return undefined
    throw e
  }
}

// A lock naming this very process is stale too: in a container every run is pid 1.
const isLive = (pid: number | undefined) => pid !== undefined && pid !== process.pid && alive(pid)

/**
 * Takes `dir/server.lock` for this process, or fails naming the process that holds it. The file
 * is written whole under a private name and then hard-linked into place, which fails atomically
 * when a lock exists. A lock whose process is dead is moved aside and the link tried again; if
 * the moved file turns out to be a lock just taken by a live process, it is linked back.
 */
const takeLock = (dir: string): string => {
  const file = join(dir, lockName)
  const mine = join(dir, `${lockName}.${process.pid}.${randomBytes(4).toString("hex")}`)
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 })
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(mine, file)
        return file
      } catch (e) {
        if (errorCode(e) !== "EEXIST") throw e
      }
      const holder = holderOf(file)
      if (isLive(holder)) {
        throw new DataDirectoryError({
          message:
            `The data directory ${dir} is in use by process ${holder} (lock ${file}); stop that server or choose another DATA_DIR`
        })
      }
      const aside = `${mine}.stale`
      try {
        renameSync(file, aside)
      } catch (e) {
        if (errorCode(e) === "ENOENT") continue
        throw e
      }
      if (isLive(holderOf(aside))) {
        try {
          linkSync(aside, file)
        } catch (e) {
          if (errorCode(e) !== "EEXIST") throw e
        }
      }
      unlinkSync(aside)
    }
    throw new DataDirectoryError({ message: `Could not take the lock ${file}: other processes keep changing it` })
  } finally {
    unlinkSync(mine)
  }
}

/** Removes the lock if it is still this process's. */
const releaseLock = (file: string) => {
  if (holderOf(file) === process.pid) unlinkSync(file)
}

/**
 * Owner-only permissions on the directory and everything in it (0700 folders, 0600 files):
 * the embedded database holds password hashes and sessions, and PGlite creates its files 0666
 * whatever the umask.
 */
const restrict = (dir: string) => {
  chmodSync(dir, 0o700)
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) restrict(path)
    else if (entry.isFile()) chmodSync(path, 0o600)
  }
}

const attempt = <A>(what: string, f: () => A) =>
  Effect.try({
    try: f,
    catch: (e) =>
      e instanceof DataDirectoryError
        ? e
        : new DataDirectoryError({ message: `${what}: ${(e as Error).message ?? String(e)}` })
  })

// Shutdown goes on whatever a release step meets.
const bestEffort = (what: string, f: () => void) =>
  Effect.try(f).pipe(Effect.catchAll((e) => Effect.logWarning(what, e.error)))

/**
 * The embedded data directory for the scope's lifetime: created (or its mode tightened) 0700 and
 * locked against a second server on the same folder. `restrict` tightens what is in it, to run
 * once the database has opened; it runs again on release, after the database has closed, since
 * the database creates its files world-writable.
 */
export const acquireDataDirectory = (dataDir: string) =>
  Effect.gen(function*() {
    const dir = resolve(dataDir)
    const denied = `Cannot restrict the data directory ${dir} to its owner (mode 0700)`
    yield* attempt(denied, () => {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      chmodSync(dir, 0o700)
    })
    yield* Effect.acquireRelease(
      attempt(`Cannot lock the data directory ${dir}`, () => takeLock(dir)),
      (file) => bestEffort(`Could not remove the lock ${file}`, () => releaseLock(file))
    )
    yield* Effect.addFinalizer(() => bestEffort(denied, () => restrict(dir)))
    return { restrict: attempt(denied, () => restrict(dir)) }
  })
