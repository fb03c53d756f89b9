/**
 * mulberry32 (Tommy Ettinger, 2017): a 32-bit seeded generator of numbers in [0, 1). The sandbox
 * gives programs its text as `Math.random` (so it uses nothing outside itself), and the robustness
 * figures draw with it.
 */
export const mulberry32 = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
