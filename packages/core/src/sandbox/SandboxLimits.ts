/** The caps on one program run in QuickJS. */
export interface SandboxLimits {
  /** Heap of one run, in bytes. */
  readonly memoryBytes: number
  /** Stack of one run, in bytes: deep recursion fails cleanly before the host's stack does. */
  readonly stackBytes: number
  /**
   * CPU budget of one call of `decide` (and of loading the module), counted in QuickJS interrupt
   * checks (one about every 10 000 operations, a fraction of a millisecond). Bars are decided in
   * batches of up to `barsPerCall`, whose budget is the sum of their bars'. Counting operations
   * instead of wall time keeps a run's outcome the same on any machine and under any load.
   */
  readonly cpuChecksPerCall: number
  /**
   * Wall-clock cap of one call into the sandbox, the safety net for work QuickJS counts as one
   * operation (a large built-in call); it is checked with the budget, so it may be overrun until
   * the next check.
   */
  readonly wallMillisPerCall: number
}

/** 32 MiB heap, 256 KiB stack, 100 interrupt checks and 1 s per call. */
export const defaultSandboxLimits: SandboxLimits = {
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  cpuChecksPerCall: 100,
  wallMillisPerCall: 1000
}

/** The most candles `data.candles` holds. */
export const candleWindow = 500
