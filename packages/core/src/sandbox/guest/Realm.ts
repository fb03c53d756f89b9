/**
 * Runs in the sandbox like `installMetering` (see `GuestSource.ts`): it must use nothing but its
 * own body and the sandbox's globals.
 *
 * Whether a program left its realm as it found it, so that the next run of the same program may
 * use the same context (V8, a search's trials: a fresh context costs a fresh JIT of the guest,
 * about as much as the trial itself). `watchRealm` records every object a program can reach
 * without making it itself: the global object, and the intrinsics reached only through instances
 * (iterator and generator prototypes), followed through own properties (symbols too, accessors'
 * functions, never calling a getter) and prototypes. `unchanged` compares each recorded object's
 * prototype, extensibility, own keys in order and their descriptors with the record: a program
 * cannot reach a new object from these but through one of them, so an unchanged record is an
 * unchanged realm. Recording walks the realm once; checking only goes over the record.
 *
 * What is not a property is reset or watched by itself: the RegExp statics (`RegExp.$1` and the
 * like), which a run's last match sets, are reset by matching once; a `FinalizationRegistry`
 * callback could run later, in another run, so a registration marks the realm changed.
 */
export function watchRealm() {
  // Taken now: the program may replace them.
  const ownKeys = Reflect.ownKeys, describe = Reflect.getOwnPropertyDescriptor, hasOwn = Object.hasOwn
  const prototypeOf = Reflect.getPrototypeOf, isExtensible = Reflect.isExtensible, apply = Reflect.apply
  const exec = RegExp.prototype.exec
  let registered = false
  const registry = globalThis.FinalizationRegistry?.prototype
  if (registry !== undefined) {
    const register = registry.register
    Object.defineProperty(registry, "register", {
      value: {
        register(this: unknown, _target: object, _held: unknown) {
          registered = true
          return apply(register, this, arguments)
        }
      }.register,
      writable: true,
      configurable: true
    })
  }
  // Intrinsics a program reaches only through instances it makes.
  const hidden: Array<unknown> = [
    globalThis,
    prototypeOf(function*() {}),
    prototypeOf(async function() {}),
    prototypeOf(async function*() {}),
    prototypeOf([][Symbol.iterator]()),
    prototypeOf(new Map()[Symbol.iterator]()),
    prototypeOf(new Set()[Symbol.iterator]()),
    prototypeOf(""[Symbol.iterator]()),
    prototypeOf("".matchAll(/(?:)/g))
  ]
  /** Per object: the object, its prototype, extensibility and own keys, then per key its flags and value (or getter and setter). */
  const record: Array<unknown> = []
  const seen = new Set<unknown>()
  const queue: Array<unknown> = []
  const visit = (value: unknown) => {
    if ((typeof value === "object" && value !== null) || typeof value === "function") {
      if (!seen.has(value)) {
        seen.add(value)
        queue.push(value)
      }
    }
  }
  for (const root of hidden) visit(root)
  for (let q = 0; q < queue.length; q++) {
    const object = queue[q] as object
    const keys = ownKeys(object)
    const prototype = prototypeOf(object)
    record.push(object, prototype, isExtensible(object), keys)
    visit(prototype)
    for (const key of keys) {
      const d = describe(object, key)!
      if (hasOwn(d, "value")) {
        record.push((d.writable ? 1 : 0) | (d.enumerable ? 2 : 0) | (d.configurable ? 4 : 0), d.value, undefined)
        visit(d.value)
      } else {
        record.push(8 | (d.enumerable ? 2 : 0) | (d.configurable ? 4 : 0), d.get, d.set)
        visit(d.get)
        visit(d.set)
      }
    }
  }
  const same = (a: unknown, b: unknown) => a === b || (a !== a && b !== b)
  /** Whether the realm is as recorded, with its RegExp statics reset. */
  const unchanged = (): boolean => {
    apply(exec, /(?:)/, [""])
    if (registered) return false
    for (let r = 0; r < record.length;) {
      const object = record[r] as object, keys = record[r + 3] as Array<PropertyKey>
      if (prototypeOf(object) !== record[r + 1] || isExtensible(object) !== record[r + 2]) return false
      const now = ownKeys(object)
      if (now.length !== keys.length) return false
      r += 4
      for (let k = 0; k < keys.length; k++, r += 3) {
        if (now[k] !== keys[k]) return false
        const d = describe(object, keys[k]!)!
        if (hasOwn(d, "value")) {
          const flags = (d.writable ? 1 : 0) | (d.enumerable ? 2 : 0) | (d.configurable ? 4 : 0)
          if (flags !== record[r] || !same(d.value, record[r + 1])) return false
        } else if (
          (8 | (d.enumerable ? 2 : 0) | (d.configurable ? 4 : 0)) !== record[r] || d.get !== record[r + 1] ||
          d.set !== record[r + 2]
        ) {
          return false
        }
      }
    }
    return true
  }
  return unchanged
}
