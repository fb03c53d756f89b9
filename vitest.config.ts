import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*"],
    // Vitest's default on two cores is one file at a time; most files wait on servers, PostgreSQL
    // and child processes as much as they compute, so two at once use the machine.
    maxWorkers: 2,
    // isolated-vm (the V8 program runtime) needs it; a project's own poolOptions are not read when
    // the root runs the projects, and without it every V8 case was skipped here.
    poolOptions: { forks: { execArgv: ["--no-node-snapshot"] } },
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
