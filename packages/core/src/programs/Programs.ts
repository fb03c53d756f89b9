import { Effect, Either } from "effect"
import { ProgramInvalid } from "../http/Errors.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { ProgramRuntime } from "../sandbox/ProgramRuntime.js"
import { compileProgram } from "../sandbox/ProgramSource.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy, type Owner } from "../users/Ownership.js"
import { declaredParameters } from "./Parameters.js"
import {
  Program,
  type ProgramId,
  ProgramList,
  type ProgramRequest,
  ProgramSummary,
  type ProgramUpdate
} from "./Program.js"
import { type ProgramEntryRow, type ProgramRow, ProgramsRepo } from "./ProgramsRepo.js"

/** A stored program, as `owned` answers it to the features that run programs. */
export type { ProgramRow }

const toSummary = (row: ProgramEntryRow) =>
  new ProgramSummary({
    id: row.id,
    language: row.language,
    name: row.name,
    created_at: row.created_at,
    description: row.description,
    updated_at: row.updated_at
  }, fromDecodedRow)

const toProgram = (row: ProgramRow) =>
  new Program({ ...toSummary(row), code: row.code, parameters: row.parameters }, fromDecodedRow)

/** Trading programs: ownership, and the rule that a stored program loads in the sandbox. */
export class Programs extends Effect.Service<Programs>()("@trading-platform/core/Programs", {
  effect: Effect.gen(function*() {
    const repo = yield* ProgramsRepo
    const runtime = yield* ProgramRuntime

    /** The request as a row to write, once its code compiles, loads, exports `decide` and declares valid `parameters`. */
    const validated = (input: ProgramRequest) =>
      Effect.gen(function*() {
        const language = input.language ?? "javascript"
        const exported = yield* runtime.check(yield* compileProgram(input.code, language))
        const parameters = exported === undefined ? null : yield* Either.mapLeft(
          declaredParameters(exported),
          (error) => new ProgramInvalid({ error: `The program's parameters are not valid: ${error}` })
        )
        return {
          name: input.name,
          description: input.description ?? null,
          language,
          code: input.code,
          parameters,
          now: yield* now
        }
      })

    /** The caller's (or a run's owner's) program, or 404 when it does not exist and 403 when it is another user's. */
    const owned = (caller: Owner, id: ProgramId) => repo.findById(id).pipe(ownedBy(caller, `Program ${id}`))

    /** The same 404 and 403 as `owned`, for requests that only check the program is the caller's: its code is not read. */
    const check = (caller: Owner, id: ProgramId) => repo.owner(id).pipe(ownedBy(caller, `Program ${id}`), Effect.asVoid)

    const create = (caller: CurrentUserShape, input: ProgramRequest) =>
      Effect.flatMap(validated(input), (write) => repo.insert({ ...write, user_id: caller.id })).pipe(
        Effect.map(toProgram),
        dieOnStorageFailure,
        withRequestSpan("Programs.create", { attributes: { userId: caller.id } })
      )

    const list = (caller: CurrentUserShape, page: Pagination) =>
      repo.listByUser({ user_id: caller.id, ...pageOf(page) }).pipe(
        Effect.map((rows) => new ProgramList({ programs: rows.map(toSummary) })),
        dieOnStorageFailure,
        withRequestSpan("Programs.list", { attributes: { userId: caller.id } })
      )

    const get = (caller: CurrentUserShape, id: ProgramId) =>
      owned(caller, id).pipe(
        Effect.map(toProgram),
        dieOnStorageFailure,
        withRequestSpan("Programs.get", { attributes: { userId: caller.id, programId: id } })
      )

    const update = (caller: CurrentUserShape, id: ProgramId, input: ProgramUpdate) =>
      owned(caller, id).pipe(
        // The stored program with the fields given; the whole is checked again, as a new one would be.
        Effect.flatMap((current) =>
          validated({
            code: input.code ?? current.code,
            name: input.name ?? current.name,
            description: input.description === undefined ? current.description : input.description,
            language: input.language ?? current.language
          })
        ),
        Effect.flatMap((write) => repo.update({ ...write, id })),
        Effect.map(toSummary),
        dieOnStorageFailure,
        withRequestSpan("Programs.update", { attributes: { userId: caller.id, programId: id } })
      )

    const remove = (caller: CurrentUserShape, id: ProgramId) =>
      Effect.zipRight(check(caller, id), repo.remove(id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Programs.remove", { attributes: { userId: caller.id, programId: id } })
      )

    return { owned, check, create, list, get, update, remove } as const
  }),
  dependencies: [ProgramsRepo.Default]
}) {}
