import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { makeSimulatedVenue } from "./SimulatedVenue.js"
import { Venues } from "./Venue.js"
import { makeVenue1Http } from "./Venue1Http.js"
import { makeVenue2Http } from "./Venue2Http.js"

/** Each venue as configured: the simulation (default) or its HTTP API. */
export const VenuesLive = Layer.effect(
  Venues,
  Effect.gen(function*() {
    const { venues } = yield* PlatformConfig
    return {
      venue1: venues.venue1.mode === "http"
        ? yield* makeVenue1Http(venues.venue1, venues.marginTables.venue1)
        : yield* makeSimulatedVenue(
          "venue1",
          venues.simulationSeed,
          venues.simulationCorrelation,
          venues.marginTables.venue1
        ),
      venue2: venues.venue2.mode === "http"
        ? yield* makeVenue2Http(venues.venue2, venues.marginTables.venue2)
        : yield* makeSimulatedVenue(
          "venue2",
          venues.simulationSeed,
          venues.simulationCorrelation,
          venues.marginTables.venue2
        )
    }
  })
)
