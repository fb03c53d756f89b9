/**
 * Runs in the sandbox (see `GuestSource.ts`): it must use nothing but its own body and the
 * sandbox's globals.
 *
 * A program's steps are counted as loop iterations and calls (QuickJS's interrupt checks count
 * them; in V8, the calls `StepCounting.ts` puts in the program's source), and a built-in counts as
 * one step however much it does, so a loop of large built-in calls (filling or joining big arrays)
 * could run for minutes on a few steps. Built-ins whose work grows with the size of their receiver
 * (or, for repeat and the pads, of their count) are therefore charged first with `charge`, which
 * the CPU budget sees; those that list an object's keys, and `JSON.stringify` (whose input may be
 * any object), are charged after the call, by the length of their answer. `charge` takes elements
 * at 64 a step, weighted below by what one element costs, measured on both runtimes
 * (`docs/programs.md`): one bar's budget spent on a loop of the largest calls then ends within
 * about a second on a loaded machine, far inside the wall-clock safety net, so the counted budget,
 * not the clock, stops it. A call deciding a batch of bars gives each bar that budget and hands
 * back once it has spent one bar's (see `nextBar`), so no call runs past about two bars' budget.
 */
export function installMetering(charge: (elements: number) => void): void {
  const constantTime = new Set(["constructor", "push", "pop", "at", "charAt", "charCodeAt", "codePointAt"])
  const byCount = new Set(["repeat", "padStart", "padEnd"])
  const nothing = () => 0
  /** Replaces `owner[name]` with a copy charged by `before` (of the receiver and arguments), then by `after` (of the answer). */
  const meter = (
    owner: any,
    name: string,
    before: (self: any, args: Array<any>) => number,
    after: (answer: any) => number = nothing
  ) => {
    const real = owner[name]
    Object.defineProperty(owner, name, {
      value: {
        [name](this: unknown, ...args: Array<any>) {
          charge(before(this, args))
          const answer = real.apply(this, args)
          charge(after(answer))
          return answer
        }
      }[name],
      writable: true,
      configurable: true
    })
  }
  const length = (x: any) => (x == null ? 0 : +x.length || 0)
  // An element of an array or string a built-in walks: a step per 8.
  const element = 8
  // A character JSON.stringify wrote: a step per 4.
  const character = 16
  // A key listed (a V8 isolate near its heap limit spent up to 6 µs on each of 100,000): 8 steps.
  const key = 512
  for (const proto of [Array.prototype, String.prototype, Object.getPrototypeOf(Uint8Array.prototype)]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (constantTime.has(name) || typeof Object.getOwnPropertyDescriptor(proto, name)!.value !== "function") continue
      meter(
        proto,
        name,
        byCount.has(name)
          ? (self, args) => element * length(self) * Math.max(1, +args[0] || 0)
          : (self) => element * length(self)
      )
    }
  }
  meter(Array, "from", (_, args) => element * length(args[0]))
  meter(JSON, "parse", (_, args) => element * length(args[0]))
  meter(JSON, "stringify", nothing, (answer) => character * length(answer))
  for (const name of ["keys", "values", "entries", "getOwnPropertyNames"]) {
    meter(Object, name, nothing, (answer) => key * length(answer))
  }
  meter(Reflect, "ownKeys", nothing, (answer) => key * length(answer))
}

/**
 * Runs in the sandbox like `installMetering`. Counts the steps of a program whose source
 * `countSteps` (StepCounting.ts) rewrote to call the global `name` in every loop and function
 * body; installed read-only, so the program cannot replace it. `metered` runs `f` within `limit`
 * steps; `begin` and `end` bracket a call the host makes itself (evaluating the module), `end`
 * answering whether it went over. Past its limit every step throws, so a program that catches
 * the error only stops at its next step, and the call is over budget whatever it answers.
 */
export function installStepCounter(name: string, overMessage: string) {
  // Taken now: the program may replace the global.
  const Over = RangeError
  // The steps of the current bar (or call), and those of the call's bars before it.
  let steps = 0, before = 0, allowed = Infinity, over = false
  const stop = () => {
    over = true
    return new Over(overMessage)
  }
  Object.defineProperty(globalThis, name, {
    value: () => {
      if (++steps > allowed) throw stop()
    }
  })
  const begin = (limit: number) => {
    steps = before = 0
    allowed = limit
    over = false
  }
  const end = () => {
    allowed = Infinity
    return over
  }
  const metered = <A>(limit: number, f: () => A): A => {
    begin(limit)
    let answer: A
    try {
      answer = f()
    } catch (e) {
      if (!end()) throw e
    }
    if (end()) throw new Over(overMessage)
    return answer!
  }
  /**
   * Starts the next bar of a call of `decide`: each bar has the call's limit of steps. Answers
   * whether the bars before it spent a bar's limit between them (the driver then hands back).
   */
  const nextBar = () => {
    before += steps
    steps = 0
    return before > allowed
  }
  /** Charges a built-in's work by its elements, as `installMetering` does. */
  const charge = (elements: number) => {
    if ((steps += Math.floor(elements / 64)) > allowed) throw stop()
  }
  return { begin, end, metered, nextBar, charge }
}
