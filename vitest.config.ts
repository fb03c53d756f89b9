import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*"],
    // Vitest's default on two cores is one file at a time; most files wait on servers, PostgreSQL
    // and child processes as much as they compute, so two at once use the machine.
    maxWorkers: 2,
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
