import { useState } from "preact/hooks"
import { ErrorText, Field, useAction } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

interface Exchange {
  readonly question: string
  readonly answer: ReadonlyArray<{ readonly text?: string; readonly tool?: string }>
}

/** A chat with the assistant, its answer written as it streams in. */
export const AssistantView = ({ client }: { client: PromiseClient }) => {
  const [message, setMessage] = useState("")
  const [transcript, setTranscript] = useState<ReadonlyArray<Exchange>>([])
  const [conversation, setConversation] = useState<number>()
  const { error, run } = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    const text = message.trim()
    if (text === "") return
    setMessage("")
    setTranscript((previous) => [...previous, { question: text, answer: [] }])
    const add = (part: Exchange["answer"][number]) =>
      setTranscript((
        previous
      ) => [...previous.slice(0, -1), { ...previous.at(-1)!, answer: [...previous.at(-1)!.answer, part] }])
    void run(async () => {
      for await (
        const { data, event: kind } of client.assistantChat({ message: text, conversation_id: conversation as never })
      ) {
        const d = data as Record<string, any>
        if (kind === "delta") add({ text: String(d.text) })
        if (kind === "tool_call") add({ tool: String(d.name) })
        if (kind === "done") setConversation(d.conversation_id)
        if (kind === "error") throw d
      }
    })
  }
  return (
    <section>
      <h2>Assistant</h2>
      {transcript.map((exchange) => (
        <>
          <p class="chat question">{exchange.question}</p>
          <div class="chat answer">
            {exchange.answer.map((part) => part.tool === undefined ? part.text : <div class="tool">→ {part.tool}</div>)}
          </div>
        </>
      ))}
      <form onSubmit={submit}>
        <Field label="Message">
          <textarea
            name="message"
            class="short"
            rows={3}
            placeholder="How is BTC doing on the 1h chart?"
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Ask</button>
        <ErrorText error={error} />
      </form>
    </section>
  )
}
