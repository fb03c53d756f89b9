/**
 * Users' own candle files, read as a stream of bytes (an HTTP body or a file) and checked row by
 * row. Two CSV layouts, with or without a header row:
 *
 * - the venues' public klines dumps (Binance futures): open time, open, high, low, close, volume,
 *   close time, quote asset volume, number of trades, taker buy base volume, taker buy quote
 *   volume, ignore;
 * - the plain `time,open,high,low,close,volume`.
 *
 * Times are epoch seconds, milliseconds or microseconds (told apart by magnitude), or ISO-8601.
 * A zip (told by its magic bytes) is read entry by entry as it arrives, each `.csv` (or `.txt`) in
 * it as one file. Blank lines and lines starting with `#` (comments, such as a sample's source and licence)
 * are skipped; a UTF-8 byte order mark and CRLF line ends are accepted.
 */
import { Effect, Option, Schema, Stream } from "effect"
import { Unzip, type UnzipFile, UnzipInflate } from "fflate"
import { type Candle, type Timeframe, timeframeMillis } from "../venues/Venue.js"

/** A row the import did not keep, or a file it could not use (`line` 0). */
export interface CandleProblem {
  /** The row's line in its file, from 1; 0 for the file as a whole. */
  readonly line: number
  /** The file's name: the entry's inside a zip, else the name the caller gave, if any. */
  readonly file?: string
  /** One plain sentence. */
  readonly message: string
}

/** Part of an import: the rows accepted since the previous batch, in file order, and the problems met. */
export interface CandleBatch {
  readonly rows: ReadonlyArray<Candle>
  readonly problems: ReadonlyArray<CandleProblem>
  /** Problems met but not listed, once the import has listed `maxProblems`. */
  readonly omittedProblems: number
}

/** How to read a candle file. */
export interface CandleFileOptions {
  /** The timeframe the rows must be on: each open time a multiple of its length since the epoch (UTC). */
  readonly timeframe: Timeframe
  /** Named in problems of a plain (unzipped) CSV. */
  readonly fileName?: string
  /** Rows per batch; 10,000 by default. */
  readonly batchSize?: number
  /** Problems listed over the whole import before the rest are only counted; 1,000 by default. */
  readonly maxProblems?: number
}

/** The bytes are not a readable zip (corrupt, cut short, or an unsupported compression). */
export class CandleFileUnreadable
  extends Schema.TaggedError<CandleFileUnreadable>()("CandleFileUnreadable", { message: Schema.String })
{}

const numeric = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/
const isoDate =
  /^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?\s*$/
/** The furthest a JavaScript date reaches from the epoch, in milliseconds. */
const dateRange = 8.64e15
/** 400 Gregorian years, which `Date.UTC` needs to reach the years 0-99 it reads as 1900-1999. */
const fourCenturies = 146_097 * 86_400_000

/**
 * A number written in decimal, or NaN. `Number` alone also takes "" and blanks (as 0), "Infinity"
 * and "0x1f"-like literals; those are caught cheaply, and the pattern decides the rare doubtful
 * cases (leading blanks, a zero).
 */
const anyDecimal = (text: string): number => {
  const n = +text
  if (!Number.isFinite(n)) return NaN
  const first = text.charCodeAt(0)
  if (n === 0 || first <= 32) return numeric.test(text) ? n : NaN
  const second = text.charCodeAt(1) | 32
  return first === 48 && (second === 120 || second === 98 || second === 111) ? NaN : n
}

/**
 * A number written in decimal, or NaN. The usual form, digits with at most one point, is read
 * here: its digits as an exact integer divided by an exact power of ten, a single rounding that
 * gives what `Number` gives, several times faster; the rest goes to `anyDecimal`.
 */
const decimal = (text: string): number => {
  let digits = 0
  let scale = 1
  let dot = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      digits = digits * 10 + (c - 48)
      if (dot) scale *= 10
    } else if (c === 46 && !dot) {
      dot = true
    } else {
      return anyDecimal(text)
    }
  }
  return text.length > (dot ? 1 : 0) && digits <= Number.MAX_SAFE_INTEGER && scale <= 1e22
    ? digits / scale
    : anyDecimal(text)
}

/** Whether a text is a decimal number, told without converting it (for the columns only checked). */
const isDecimal = (text: string): boolean => {
  let dot = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 46 && !dot) dot = true
    else if (c < 48 || c > 57) return !Number.isNaN(anyDecimal(text))
  }
  return text.length > (dot ? 1 : 0)
}

/** The units of an epoch number per millisecond, by its magnitude: µs from 1e14, ms from 1e11, else seconds. */
const unitsPerMilli = (epoch: number): number => {
  const size = Math.abs(epoch)
  return size >= 1e14 ? 1000 : size >= 1e11 ? 1 : 0.001
}

/** Minutes east of UTC of an ISO-8601 zone designator (`Z`, `+02`, `+0530`, `-03:00`); UTC when absent. */
const offsetMinutes = (zone: string | undefined): number => {
  if (zone === undefined || zone === "Z" || zone === "z") return 0
  const minutes = Number(zone.slice(1, 3)) * 60 + (zone.length > 3 ? Number(zone.slice(-2)) : 0)
  return zone.startsWith("-") ? -minutes : minutes
}

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31

const isoMillis = (text: string): number => {
  const m = isoDate.exec(text)
  if (m === null) return NaN
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = m[4] === undefined ? 0 : Number(m[4])
  const minute = m[5] === undefined ? 0 : Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return NaN
  }
  const digits = m[7] ?? ""
  const millis = Number(digits.slice(0, 3).padEnd(3, "0")) + (digits.length > 3 ? Number(`0.${digits.slice(3)}`) : 0)
  const utc = year < 100
    ? Date.UTC(year + 400, month - 1, day, hour, minute, second) - fourCenturies
    : Date.UTC(year, month - 1, day, hour, minute, second)
  return utc + millis - offsetMinutes(m[8]) * 60_000
}

/** Milliseconds from an epoch number in the unit its magnitude tells. */
const epochToMillis = (epoch: number): number => {
  const units = unitsPerMilli(epoch)
  return units === 1 ? epoch : units === 1000 ? epoch / 1000 : epoch * 1000
}

/** Epoch milliseconds from an epoch number (s, ms or µs by magnitude) or an ISO-8601 text; NaN when neither. */
const timeMillis = (text: string): number => {
  const epoch = text.charCodeAt(4) === 45 ? NaN : decimal(text)
  const ms = Number.isNaN(epoch) ? isoMillis(text) : epochToMillis(epoch)
  return Math.abs(ms) <= dateRange ? ms : NaN
}

/**
 * A time as epoch milliseconds: an epoch number in seconds, milliseconds or microseconds (told apart
 * by magnitude: from 1e14 microseconds, from 1e11 milliseconds, below that seconds), or an ISO-8601
 * date or date-time (UTC unless it carries an offset, such as `2024-03-01T08:00:00+01:00`). None
 * when it is neither, or beyond the dates JavaScript can hold.
 */
export const epochMillis = (value: string | number): Option.Option<number> => {
  const ms = timeMillis(String(value))
  return Number.isNaN(ms) ? Option.none() : Option.some(ms)
}

type Layout = "plain" | "klines"
const columnCount: Record<Layout, number> = { plain: 6, klines: 12 }
const priceNames = ["open", "high", "low", "close"] as const
/** The columns' names in messages, by position (both layouts share the first six). */
const columnNames = [
  "Open time",
  "Open",
  "High",
  "Low",
  "Close",
  "Volume",
  "Close time",
  "Quote asset volume",
  "Number of trades",
  "Taker buy base volume",
  "Taker buy quote volume"
]

const unquote = (field: string): string =>
  field.length >= 2 && field.charCodeAt(0) === 34 && field.charCodeAt(field.length - 1) === 34
    ? field.slice(1, -1)
    : field

/**
 * A header row: its 2nd to 5th columns named open, high, low and close (any case, quoted or not),
 * and its first no time. The second column's first character rules out data rows cheaply.
 */
const isHeader = (fields: ReadonlyArray<string>): boolean => {
  if (fields.length < 5) return false
  const first = fields[1]!.trimStart().charCodeAt(0)
  if (first !== 34 && first !== 79 && first !== 111) return false
  return priceNames.every((name, i) => unquote(fields[i + 1]!.trim()).toLowerCase() === name) &&
    Number.isNaN(timeMillis(unquote(fields[0]!)))
}

const utc = (ms: number): string => new Date(ms).toISOString()

/** What a problem is reported against: a file, and its count of problems. */
interface Reported {
  readonly name: string | undefined
  problems: number
}

interface CsvFile extends Reported {
  readonly index: number
  readonly decoder: TextDecoder
  pending: string
  line: number
  layout: Layout | undefined
  rows: number
}

/**
 * The state of one import: the files met so far, the open times seen (for duplicates), and the
 * batch being filled. Text goes in file by file; full batches come out.
 */
const makeImport = (options: CandleFileOptions) => {
  const timeframe = options.timeframe
  const step = timeframeMillis[timeframe]
  const batchSize = options.batchSize ?? 10_000
  const maxProblems = options.maxProblems ?? 1_000
  /**
   * Where each open time was first seen, by its place on the grid: file index × 2^32 + line. Both
   * are small integers for the first file, which V8 keeps unboxed (twice as fast as the times).
   */
  const seen = new Map<number, number>()
  const fileNames: Array<string | undefined> = []
  const done: Array<CandleBatch> = []
  let rows: Array<Candle> = []
  let problems: Array<CandleProblem> = []
  let omitted = 0
  let listed = 0

  const report = (file: Reported, line: number, message: string) => {
    file.problems++
    if (listed >= maxProblems) {
      omitted++
      return
    }
    listed++
    problems.push(file.name === undefined ? { line, message } : { line, file: file.name, message })
  }

  const cut = () => {
    if (rows.length > 0 || problems.length > 0 || omitted > 0) {
      done.push({ rows, problems, omittedProblems: omitted })
      rows = []
      problems = []
      omitted = 0
    }
  }

  const earlier = (where: number, file: CsvFile): string => {
    const index = Math.floor(where / 4_294_967_296)
    const line = where % 4_294_967_296
    const name = fileNames[index]
    return index === file.index || name === undefined ? `line ${line}` : `line ${line} of ${name}`
  }

  /** The klines layout's close time: the open time plus one step, less one unit of the open time's. */
  const closeProblem = (openText: string, open: number, closeText: string): string | undefined => {
    const openEpoch = decimal(openText)
    if (!Number.isNaN(openEpoch)) {
      const units = unitsPerMilli(openEpoch)
      const expected = openEpoch + (units === 1000 ? step * 1000 : units === 1 ? step : step / 1000) - 1
      const close = decimal(closeText)
      if (close === expected) return undefined
      if (Number.isNaN(close)) return `Close time "${closeText}" is not a number.`
      const unit = units === 1000 ? "µs" : units === 1 ? "ms" : "s"
      return `Close time ${close} is not the open time plus ${timeframe} less 1 ${unit} (${expected}).`
    }
    const close = timeMillis(closeText)
    if (close === open + step - 1) return undefined
    if (Number.isNaN(close)) return `Close time "${closeText}" is not an epoch time or an ISO-8601 date.`
    return `Close time ${utc(close)} is not the open time plus ${timeframe} less 1 ms (${utc(open + step - 1)}).`
  }

  /** Keeps a row, or says the first thing wrong with it. */
  const row = (file: CsvFile, line: number, fields: Array<string>): string | undefined => {
    for (let i = 0; i < fields.length; i++) fields[i] = unquote(fields[i]!)
    const time = timeMillis(fields[0]!)
    if (Number.isNaN(time)) return `Open time "${fields[0]}" is not an epoch time or an ISO-8601 date.`
    const open = decimal(fields[1]!)
    const high = decimal(fields[2]!)
    const low = decimal(fields[3]!)
    const close = decimal(fields[4]!)
    const volume = decimal(fields[5]!)
    if (Number.isNaN(open + high + low + close + volume)) {
      const i = [open, high, low, close, volume].findIndex(Number.isNaN) + 1
      return `${columnNames[i]} "${fields[i]}" is not a number.`
    }
    if (file.layout === "klines") {
      for (let i = 7; i <= 10; i++) {
        if (!isDecimal(fields[i]!)) return `${columnNames[i]} "${fields[i]}" is not a number.`
      }
    }
    if (!(open > 0)) return `Open ${open} is not above zero.`
    if (!(high > 0)) return `High ${high} is not above zero.`
    if (!(low > 0)) return `Low ${low} is not above zero.`
    if (!(close > 0)) return `Close ${close} is not above zero.`
    if (volume < 0) return `Volume ${volume} is negative.`
    if (high < Math.max(open, close)) {
      return `High ${high} is below the ${open > close ? "open" : "close"} ${Math.max(open, close)}.`
    }
    if (low > Math.min(open, close)) {
      return `Low ${low} is above the ${open < close ? "open" : "close"} ${Math.min(open, close)}.`
    }
    if (time % step !== 0) {
      const grid = `a whole number of ${timeframe} since 1970-01-01 UTC`
      return `Open time ${utc(time)} is not on the ${timeframe} grid (${grid}).`
    }
    if (file.layout === "klines") {
      const problem = closeProblem(fields[0]!, time, fields[6]!)
      if (problem !== undefined) return problem
    }
    const slot = time / step
    const first = seen.get(slot)
    if (first !== undefined) return `Open time ${utc(time)} repeats ${earlier(first, file)}.`
    seen.set(slot, file.index * 4_294_967_296 + line)
    rows.push({ time, open, high, low, close, volume })
    file.rows++
    if (rows.length >= batchSize) cut()
    return undefined
  }

  const columnsProblem = (count: number) =>
    `The row has ${count} columns; a candle row has 6 (time,open,high,low,close,volume) or 12 (the klines dump layout).`

  /** One line of a file: skipped when blank, a comment or a header (the first may tell the layout), else a row. */
  const readLine = (file: CsvFile, text: string) => {
    const line = ++file.line
    const content = text.charCodeAt(text.length - 1) === 13 ? text.slice(0, -1) : text
    const first = content.charCodeAt(0)
    if (content.length === 0 || first === 35 || (first <= 32 && content.trim().length === 0)) return
    const fields = content.split(",")
    if (file.layout === undefined) {
      if (fields.length === 6) file.layout = "plain"
      else if (fields.length === 12) file.layout = "klines"
      else return report(file, line, columnsProblem(fields.length))
    } else if (fields.length !== columnCount[file.layout]) {
      return report(
        file,
        line,
        `The row has ${fields.length} columns where this file's rows have ${columnCount[file.layout]}.`
      )
    }
    if (isHeader(fields)) return
    const problem = row(file, line, fields)
    if (problem !== undefined) report(file, line, problem)
  }

  const readText = (file: CsvFile, text: string) => {
    const all = file.pending.length === 0 ? text : file.pending + text
    let from = 0
    for (let at = all.indexOf("\n"); at !== -1; at = all.indexOf("\n", from)) {
      readLine(file, all.slice(from, at))
      from = at + 1
    }
    file.pending = all.slice(from)
  }

  return {
    /** Starts a file of the import. */
    open: (name: string | undefined): CsvFile => {
      fileNames.push(name)
      return {
        name,
        index: fileNames.length - 1,
        decoder: new TextDecoder("utf-8"),
        pending: "",
        line: 0,
        layout: undefined,
        rows: 0,
        problems: 0
      }
    },
    /** Reads the next bytes of a file; a line or a character split between chunks waits for the rest. */
    push: (file: CsvFile, bytes: Uint8Array) => readText(file, file.decoder.decode(bytes, { stream: true })),
    /** Reads the end of a file: its last line, even without a line end. */
    close: (file: CsvFile) => {
      readText(file, file.decoder.decode())
      if (file.pending.length > 0) readLine(file, file.pending)
      file.pending = ""
      if (file.rows === 0 && file.problems === 0) report(file, 0, "The file holds no candle rows.")
    },
    /** A problem with a file as a whole. */
    fileProblem: (name: string | undefined, message: string) => report({ name, problems: 0 }, 0, message),
    /** The batches filled since the last call; at the end, also the last, partly filled one. */
    take: (end: boolean): ReadonlyArray<CandleBatch> => {
      if (end) cut()
      return done.splice(0, done.length)
    }
  }
}

const isZip = (head: Uint8Array) => head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04

const unreadable = (error: unknown) =>
  error instanceof CandleFileUnreadable
    ? error
    : new CandleFileUnreadable({
      message: `The zip could not be read: ${error instanceof Error ? error.message : String(error)}.`
    })

/**
 * The bytes of one import, told apart as a zip or a CSV by their first four bytes (kept until they
 * have all arrived). A zip's entries are read as they inflate: each `.csv` (or `.txt`) as a file of
 * the import; folders and macOS metadata are passed over, and other entries reported as skipped.
 */
const makeReader = (options: CandleFileOptions) => {
  const candles = makeImport(options)
  let head = new Uint8Array(0)
  let mode:
    | { kind: "csv"; file: CsvFile }
    | { kind: "zip"; unzip: Unzip; open: Set<CsvFile>; files: number }
    | undefined

  const startZip = () => {
    const open = new Set<CsvFile>()
    const zip = { kind: "zip" as const, unzip: new Unzip(), open, files: 0 }
    zip.unzip.register(UnzipInflate)
    /** Lets an entry's bytes through unread: fflate keeps those of an entry never started. */
    const pass = (entry: UnzipFile) => {
      if (entry.compression !== 0 && entry.compression !== 8) return
      entry.ondata = () => {}
      entry.start()
    }
    zip.unzip.onfile = (entry: UnzipFile) => {
      const base = entry.name.slice(entry.name.lastIndexOf("/") + 1)
      if (entry.name.endsWith("/") || entry.name.startsWith("__MACOSX/") || base.startsWith("._")) return pass(entry)
      if (!/\.(csv|txt)$/i.test(base)) {
        pass(entry)
        return candles.fileProblem(entry.name, "The zip entry is not a .csv file and was skipped.")
      }
      const file = candles.open(entry.name)
      zip.files++
      open.add(file)
      entry.ondata = (error, data, final) => {
        if (error !== null) {
          throw new CandleFileUnreadable({
            message: `The zip entry ${entry.name} could not be inflated: ${error.message}.`
          })
        }
        candles.push(file, data)
        if (final) {
          open.delete(file)
          candles.close(file)
        }
      }
      entry.start()
    }
    return zip
  }

  const feed = (bytes: Uint8Array) => {
    if (mode === undefined) return
    if (mode.kind === "csv") candles.push(mode.file, bytes)
    else mode.unzip.push(bytes)
  }

  const choose = () => {
    mode = isZip(head) ? startZip() : { kind: "csv", file: candles.open(options.fileName) }
    const bytes = head
    head = new Uint8Array(0)
    feed(bytes)
  }

  return {
    push: (bytes: Uint8Array): ReadonlyArray<CandleBatch> => {
      if (mode === undefined) {
        const joined = new Uint8Array(head.length + bytes.length)
        joined.set(head)
        joined.set(bytes, head.length)
        head = joined
        if (head.length >= 4) choose()
      } else {
        feed(bytes)
      }
      return candles.take(false)
    },
    end: (): ReadonlyArray<CandleBatch> => {
      if (mode === undefined) choose()
      const ended = mode!
      if (ended.kind === "csv") {
        candles.close(ended.file)
      } else {
        ended.unzip.push(new Uint8Array(0), true)
        const [cut] = ended.open
        if (cut !== undefined) throw new CandleFileUnreadable({ message: `The zip ends inside its entry ${cut.name}.` })
        if (ended.files === 0) candles.fileProblem(options.fileName, "The zip holds no .csv file.")
      }
      return candles.take(true)
    }
  }
}

/**
 * Reads a candle file, a CSV or a zip of CSVs, as it streams in, into batches of checked rows.
 *
 * A row is kept only when all is well: 6 or 12 columns as its file's other rows, numbers where
 * numbers belong, prices above zero, a volume not below zero, the high at or above the open and
 * close and the low at or below them, the open time on the timeframe's grid, for the klines layout
 * a close time one step less one unit after the open time, and an open time no earlier row of the
 * import had. Any other row is reported with its line (the later of two duplicates). Rows out of
 * order are kept. A header row (columns 2-5 named open, high, low, close) is skipped.
 */
export const parseCandles = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  options: CandleFileOptions
): Stream.Stream<CandleBatch, E | CandleFileUnreadable, R> =>
  Stream.suspend(() => {
    const reader = makeReader(options)
    return bytes.pipe(
      Stream.mapConcatEffect((chunk) => Effect.try({ try: () => reader.push(chunk), catch: unreadable })),
      Stream.concat(Stream.fromIterableEffect(Effect.try({ try: () => reader.end(), catch: unreadable })))
    )
  })

/** Runs an import to its end and gathers its batches into one: for small files and tests. */
export const collectCandles = <E, R>(batches: Stream.Stream<CandleBatch, E, R>): Effect.Effect<CandleBatch, E, R> =>
  Stream.runFold(
    batches,
    { rows: [] as Array<Candle>, problems: [] as Array<CandleProblem>, omittedProblems: 0 },
    (all, batch) => {
      for (const candle of batch.rows) all.rows.push(candle)
      for (const problem of batch.problems) all.problems.push(problem)
      all.omittedProblems += batch.omittedProblems
      return all
    }
  )
