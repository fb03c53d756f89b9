/**
 * A program's code in CodeMirror, with its language's highlighting and a compile error marked at its
 * line. CodeMirror comes from a chunk of its own, loaded when the first editor shows (as the chart
 * library is), so the page's budget leaves it out; until it has loaded, and if it cannot load, the
 * code is in a plain text area.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { CodeError, Language, MountedEditor } from "./CodeMirrorSetup.js"

export type { CodeError, Language }

/** The program's `language` as the editor highlights it: TypeScript, or JavaScript for anything else. */
export const languageOf = (language: string | null | undefined): Language =>
  language === "typescript" ? "typescript" : "javascript"

/**
 * The editor holds the text once it has loaded: `code` is what it starts with, `onCode` hears each
 * change. (Writing `code` back into it on every render would race a fast typist: the effect of a
 * render one keystroke old would undo the newer keystroke, and each undo would render again.)
 */
export const CodeEditor = ({ label, code, onCode, language, error }: {
  label: string
  code: string
  onCode: (code: string) => void
  language: Language
  error: CodeError | undefined
}) => {
  const host = useRef<HTMLDivElement>(null)
  const editor = useRef<MountedEditor | undefined>(undefined)
  const [ready, setReady] = useState(false)
  // The latest handler and text, for the editor made once.
  const changed = useRef(onCode)
  changed.current = onCode
  const latest = useRef(code)
  latest.current = code
  useEffect(() => {
    let current = true
    void import("./CodeMirrorSetup.js").then(({ mountEditor }) => {
      if (!current) return
      editor.current = mountEditor(host.current!, {
        // What the plain text area holds by now.
        doc: latest.current,
        label,
        language,
        onChange: (doc) => changed.current(doc)
      })
      setReady(true)
    })
    return () => {
      current = false
      editor.current?.destroy()
      editor.current = undefined
    }
  }, [])
  useEffect(() => editor.current?.setLanguage(language), [language, ready])
  useEffect(() => editor.current?.showError(error ?? null), [error, ready])
  return (
    <div class="code-editor" data-language={language} data-ready={ready ? "" : undefined}>
      <span class="label" aria-hidden="true">{label} ({language === "typescript" ? "TypeScript" : "JavaScript"})</span>
      {!ready && (
        <textarea
          name="code"
          aria-label={label}
          spellcheck={false}
          value={code}
          aria-invalid={error === undefined ? undefined : true}
          onInput={(event) => onCode(event.currentTarget.value)}
        />
      )}
      <div ref={host} class="code-host" aria-invalid={error === undefined ? undefined : true} />
    </div>
  )
}
