/** The engines a program can run on: V8 isolates (`isolated-vm`) or QuickJS compiled to WebAssembly. */
export type SandboxRuntimeName = "v8" | "quickjs"

/** The caps on one program run, and the runtime it runs on. */
export interface SandboxLimits {
  /**
   * The runtime (`SANDBOX_RUNTIME`); absent, V8 where `isolated-vm` loads, else QuickJS (see
   * `selectedProgramRuntime`). Threads get it with the limits.
   */
  readonly runtime?: SandboxRuntimeName
  /** Heap of one run, in bytes. */
  readonly memoryBytes: number
  /** Stack of one run, in bytes: deep recursion fails cleanly before the host's stack does. */
  readonly stackBytes: number
  /**
   * CPU budget of one call of `decide` (and of loading the module), in QuickJS interrupt checks:
   * one every 10 000 steps, a step being a loop iteration or a call (`stepsPerCheck`), a fraction of
   * a millisecond. QuickJS counts the steps itself; in V8 the program's source counts them (see
   * `StepCounting.ts`). Bars are decided in batches of up to 64, each bar with this budget, as when
   * decided alone; a call hands back once it has spent one bar's. Counting steps instead of time
   * keeps a run's outcome the same on any machine and under any load (QuickJS counts up to about
   * three times V8's steps for the same code: docs/programs.md).
   */
  readonly cpuChecksPerCall: number
  /**
   * Wall-clock safety net of one call into the sandbox, far above what the CPU budget takes: it
   * stops work the count misses (one call of a huge built-in, a spread of a huge array) and calls
   * on a machine too overloaded to be fair. Checked with the budget, so it may be overrun until the
   * next check. Its breach is not the program's verdict (`SandboxStalled`): a backtest or live run
   * is tried again, a validation answers 503.
   */
  readonly wallMillisPerCall: number
}

/** 32 MiB heap, 256 KiB stack, 100 interrupt checks and a 30 s safety net per call. */
export const defaultSandboxLimits: SandboxLimits = {
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  cpuChecksPerCall: 100,
  wallMillisPerCall: 30_000
}

/** The most candles `data.candles` holds. */
export const candleWindow = 500
