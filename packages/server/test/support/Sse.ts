import { Effect } from "effect"
import { baseUrl } from "./TestServer.js"

export interface SseEvent {
  readonly event: string
  readonly data: any
}

/** Parses a whole `text/event-stream` body into its events (data as JSON). */
export const parseSse = (text: string): Array<SseEvent> =>
  text.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split("\n")
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message"
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")
    return { event, data: JSON.parse(data) }
  })

/** POSTs and reads the whole event stream: status, headers, events (or the JSON body of an error). */
export const postSse = (path: string, token: string, body: unknown) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    return yield* Effect.promise(async () => {
      const response = await fetch(base + path, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await response.text()
      const isStream = response.headers.get("content-type")?.includes("text/event-stream") ?? false
      return {
        status: response.status,
        headers: response.headers,
        text,
        events: isStream ? parseSse(text) : [],
        body: isStream ? undefined : JSON.parse(text)
      }
    })
  })
