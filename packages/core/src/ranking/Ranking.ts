import { ParseResult, Schema } from "effect"
import { defaultedParam } from "../http/Defaults.js"
import { integerParam } from "../http/IdParam.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { factorKeys, findFactor } from "./FactorCatalogue.js"

export const FactorCategory = Schema.Literal("momentum", "trend", "volatility", "volume", "microstructure")

export class Factor extends Schema.Class<Factor>("Factor")({
  id: Schema.Int,
  /** The name used in queries and in a ranking row's `factors`. */
  key: Schema.String,
  name: Schema.String,
  category: FactorCategory,
  description: Schema.String,
  source: Schema.Literal("builtin"),
  /** Whether a higher value ranks a symbol higher (`better`) or lower (`worse`). */
  higher_is: Schema.Literal("better", "worse"),
  /** The `ta` call that gives a program the same value, or null (microstructure factors). */
  ta: Schema.NullOr(Schema.String)
}) {}

export class FactorsResponse extends Schema.Class<FactorsResponse>("FactorsResponse")({
  factors: Schema.Array(Factor)
}) {}

export const FactorKey = Schema.Literal(...factorKeys)

/** `/api/ranking/factors/{id}`: a factor by its `id` (as the list gives it) or by its `key`. */
export const FactorPath = Schema.Struct({
  id: Schema.String.annotations({
    jsonSchema: {
      description: "The factor's `id`, or its `key`",
      anyOf: [{ type: "string", pattern: "^[1-9][0-9]*$" }, { type: "string", enum: factorKeys }]
    }
  })
})
export type FactorKey = typeof FactorKey.Type

/** A factor named by its key or its id, decoded to its key. */
const FactorRef = Schema.transformOrFail(Schema.String, FactorKey, {
  strict: true,
  decode: (ref, _, ast) => {
    const factor = findFactor(ref.trim())
    return factor
      ? ParseResult.succeed(factor.key as FactorKey)
      : ParseResult.fail(new ParseResult.Type(ast, ref, `unknown factor "${ref}"`))
  },
  encode: ParseResult.succeed
})

/** `key:weight`, a weight being a number of at least 0. */
const Weight = Schema.transformOrFail(Schema.String, Schema.Tuple(FactorKey, Schema.Number), {
  strict: true,
  decode: (text, options, ast) => {
    const at = text.lastIndexOf(":")
    const weight = at > 0 && text.slice(at + 1).trim() !== "" ? Number(text.slice(at + 1)) : NaN
    if (!(weight >= 0 && weight < Infinity)) {
      return ParseResult.fail(
        new ParseResult.Type(ast, text, `weight "${text}" must be factor:number, the number at least 0`)
      )
    }
    return ParseResult.map(
      ParseResult.decodeUnknown(FactorRef)(text.slice(0, at), options),
      (key) => [key, weight] as const
    )
  },
  encode: ([key, weight]) => ParseResult.succeed(`${key}:${weight}`)
})

const commaList = <A, R>(item: Schema.Schema<A, string, R>) =>
  Schema.split(",").pipe(
    Schema.compose(Schema.Array(item)),
    Schema.minItems(1, { message: () => "must name at least one factor" })
  )

/** What the ranking queries leave out; the service fills them in. */
export const rankingDefaults = { timeframe: "1h", limit: 50, horizon: 1, exchange: "venue1" } as const

const TableParamsFields = Schema.Struct({
  /** Factor keys or ids, comma-separated; all factors when absent. */
  factors: Schema.optional(commaList(FactorRef)),
  timeframe: defaultedParam(Timeframe, rankingDefaults.timeframe),
  limit: defaultedParam(integerParam(1, 500), rankingDefaults.limit),
  /** `key:weight` pairs, comma-separated; a chosen factor without one weighs 1. */
  weights: Schema.optional(commaList(Weight)),
  exchange: defaultedParam(Exchange, rankingDefaults.exchange)
})

export const TableParams = TableParamsFields.pipe(
  Schema.filter((p) => {
    const chosen = new Set<string>(p.factors ?? factorKeys)
    const stray = (p.weights ?? []).find(([key]) => !chosen.has(key))
    if (stray) return { path: ["weights"], message: `weight for "${stray[0]}", which is not among the chosen factors` }
    const weights = new Map(p.weights ?? [])
    return Array.from(chosen).some((key) => (weights.get(key) ?? 1) > 0) ||
      { path: ["weights"], message: "at least one chosen factor must weigh more than 0" }
  })
).annotations({ parseOptions: { errors: "all" } })
export type TableParams = typeof TableParams.Type

export const RankingRow = Schema.Struct({
  rank: Schema.Int,
  symbol: Schema.String,
  /** The weighted mean of `normalized` over the factors the symbol has a value for. */
  score: Schema.Number,
  /** Each chosen factor's raw value; null when the symbol lacks the data for it. */
  factors: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.Number) }),
  /** Each present factor's z-score across the universe, winsorised at ±3, negated where lower is better. */
  normalized: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** The chosen factors the symbol has no value for; it is ranked on the others. */
  missing: Schema.Array(Schema.String)
})
export type RankingRow = typeof RankingRow.Type

export class RankingTable extends Schema.Class<RankingTable>("RankingTable")({
  rows: Schema.Array(RankingRow),
  computed_at: Schema.String,
  timeframe: Timeframe,
  exchange: Exchange,
  /** The chosen factors and the weight each had. */
  weights: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** Symbols of the universe left out of the table, each with the reason. */
  errors: Schema.Record({ key: Schema.String, value: Schema.String })
}) {}

export const FactorParams = Schema.Struct({
  timeframe: defaultedParam(Timeframe, rankingDefaults.timeframe),
  /** Bars of the forward return. */
  horizon: defaultedParam(integerParam(1, 100), rankingDefaults.horizon),
  exchange: defaultedParam(Exchange, rankingDefaults.exchange)
}).annotations({ parseOptions: { errors: "all" } })
export type FactorParams = typeof FactorParams.Type

export const InformationCoefficient = Schema.Struct({
  /** Bars with a coefficient (at least three symbols with both values). */
  bars: Schema.Int,
  mean: Schema.NullOr(Schema.Number),
  /** The mean over its standard error: mean / (sample standard deviation / √bars). */
  t_stat: Schema.NullOr(Schema.Number),
  /** Share of bars whose coefficient has the sign `higher_is` promises (positive for `better`). */
  hit_rate: Schema.NullOr(Schema.Number),
  series: Schema.Array(Schema.Struct({ time: Schema.String, ic: Schema.Number }))
})

export class FactorEffectiveness extends Schema.Class<FactorEffectiveness>("FactorEffectiveness")({
  factor: Factor,
  exchange: Exchange,
  timeframe: Timeframe,
  horizon: Schema.Int,
  computed_at: Schema.String,
  /** Spearman rank correlation, across the universe, of the factor at each bar with the return over the next `horizon` bars. */
  ic: InformationCoefficient
}) {}
