import { Programs } from "./Programs.js"

export { Programs }

/** The caller's programs on the platform's storage; needs a `ProgramRuntime` to check them. */
export const ProgramsLive = Programs.Default
