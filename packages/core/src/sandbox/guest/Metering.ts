/**
 * Runs in the sandbox (see `GuestSource.ts`): it must use nothing but its own body and the
 * sandbox's globals.
 *
 * QuickJS checks its interrupt handler only every so many loop iterations and calls, and a built-in
 * counts as one step however much it does, so a loop of large built-in calls (filling or joining
 * big arrays) could run for minutes between two checks. Built-ins whose work grows with the size
 * of their receiver (or, for repeat and the pads, of their count) are therefore charged first
 * with an empty loop of one iteration per 1024 elements, which the CPU budget sees.
 */
export function installMetering(): void {
  const charge = (n: number) => {
    for (let i = n >>> 10; i > 0; i--);
  }
  const constantTime = new Set(["constructor", "push", "pop", "at", "charAt", "charCodeAt", "codePointAt"])
  const byCount = new Set(["repeat", "padStart", "padEnd"])
  const meter = (owner: any, name: string, size: (self: any, args: Array<any>) => number) => {
    const real = owner[name]
    Object.defineProperty(owner, name, {
      value: {
        [name](this: unknown, ...args: Array<any>) {
          charge(size(this, args))
          return real.apply(this, args)
        }
      }[name],
      writable: true,
      configurable: true
    })
  }
  const length = (x: any) => (x == null ? 0 : +x.length || 0)
  for (const proto of [Array.prototype, String.prototype, Object.getPrototypeOf(Uint8Array.prototype)]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (constantTime.has(name) || typeof Object.getOwnPropertyDescriptor(proto, name)!.value !== "function") continue
      meter(proto, name, byCount.has(name) ? (self, args) => length(self) * Math.max(1, +args[0] || 0) : length)
    }
  }
  meter(Array, "from", (_, args) => length(args[0]))
  meter(JSON, "parse", (_, args) => length(args[0]))
  meter(JSON, "stringify", (_, args) => length(args[0]))
}
