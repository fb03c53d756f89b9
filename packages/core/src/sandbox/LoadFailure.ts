import { ProgramInvalid } from "../http/Errors.js"

const position = /program\.js:(\d+):(\d+)/

export const firstLine = (text: string) => text.split("\n")[0]

/** What went wrong while a program loaded: no `text` means it loaded but exports no function `decide`. */
export interface LoadFailure {
  readonly overBudget: boolean
  readonly text?: string | undefined
}

export const loadFailure = ({ overBudget, text }: LoadFailure) => {
  if (overBudget) return new ProgramInvalid({ error: "The program exceeded its CPU budget while loading" })
  if (text === undefined) return new ProgramInvalid({ error: "The program must export a function decide(data)" })
  const at = position.exec(text)
  return new ProgramInvalid({
    error: `The program does not load: ${firstLine(text)}`,
    ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {})
  })
}
