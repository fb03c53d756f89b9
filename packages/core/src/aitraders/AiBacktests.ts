import { Effect, Option } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { type AccountRow, Accounts } from "../accounts/Accounts.js"
import { accountExchange } from "../automation/Bindings.js"
import { alignBars } from "../backtests/AlignedBars.js"
import { backtestDefaults, type BacktestSettings, defaultSettings } from "../backtests/Backtest.js"
import { BacktestEngine, fundingOf } from "../backtests/BacktestEngine.js"
import { backtestRange } from "../backtests/Backtests.js"
import { outcomeOf } from "../backtests/BacktestThreadProtocol.js"
import { windowMillis } from "../backtests/BacktestWorkers.js"
import { defaultAiTraderOptions, PlatformConfig } from "../config/PlatformConfig.js"
import { LeverageTooHigh, NotFound } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { cancelUnfinished } from "../jobs/JobQueue.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { JobFailed, type JobLease } from "../jobs/JobWorkers.js"
import { type CandleSource, MarketData } from "../market/MarketData.js"
import type { Bars, Decider } from "../sandbox/Decider.js"
import { type Decision, hold } from "../sandbox/Decision.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import { unlistedRules } from "../trading/Fills.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { type Candle, timeframeMillis } from "../venues/Venue.js"
import {
  AiBacktest,
  aiBacktestDefaults,
  AiBacktestEntry,
  type AiBacktestId,
  AiBacktestList,
  type AiBacktestOutcome,
  type AiBacktestRequest,
  type AiBacktestSlot,
  maxAiBacktestSlots
} from "./AiBacktest.js"
import { type AiBacktestEntryRow, aiBacktestJobKind, AiBacktestRow, AiBacktestsRepo } from "./AiBacktestsRepo.js"
import { type ModelDecision, toDecision } from "./AiTrader.js"
import { AiTraders } from "./AiTraders.js"
import { AiTradersRepo } from "./AiTradersRepo.js"
import { ModelCalls } from "./ModelCalls.js"
import { buildPrompt, contextCandles } from "./TraderContext.js"
import { decodeAnswer, modelCost } from "./TraderModel.js"

const toEntry = (row: AiBacktestEntryRow) =>
  new AiBacktestEntry({
    id: row.id,
    account_id: row.account_id,
    status: row.status,
    mode: row.mode,
    symbols: row.symbols,
    timeframe: row.timeframe,
    interval_minutes: row.interval_minutes,
    start: row.start_at,
    end: row.end_at,
    initial_balance: row.initial_balance,
    fee_rate: row.fee_rate,
    slippage: row.slippage,
    margin_mode: row.margin_mode,
    leverage: row.leverage,
    max_model_calls: row.max_model_calls,
    progress: row.progress,
    attempts: row.attempts,
    error: row.error,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at
  }, fromDecodedRow)

const toBacktest = (row: AiBacktestRow) => {
  const result = row.result
  return new AiBacktest({
    ...toEntry(row),
    model: result?.model ?? null,
    stop_reason: result?.stop_reason ?? null,
    model_calls: result?.model_calls ?? null,
    cached_calls: result?.cached_calls ?? null,
    prompt_tokens: result?.prompt_tokens ?? null,
    completion_tokens: result?.completion_tokens ?? null,
    cost: result?.cost ?? null,
    metrics: result?.metrics ?? null,
    per_symbol: result?.per_symbol ?? [],
    final_balance: result?.final_balance ?? null,
    equity_curve: result?.equity_curve ?? [],
    trades: result?.trades ?? [],
    fills: result?.fills ?? [],
    slots: result?.slots ?? []
  }, fromDecodedRow)
}

/**
 * A decider that holds on every bar: the engine steps bars with it between two decision slots,
 * stopping before a bar that touches a symbol's exit band (which the engine settles).
 */
const holding = (): Decider => {
  let bars: Bars = []
  return {
    chunk: (chunk) => {
      bars = chunk
    },
    decide: (from, _account, bands, until = bars[0]!.length) => {
      for (let i = from; i < until; i++) {
        if (bars.some((symbol, s) => symbol[i]!.low <= bands[s]!.floor || symbol[i]!.high >= bands[s]!.ceiling)) {
          return { index: i }
        }
      }
      return { index: until }
    }
  }
}

/**
 * The engine's decisions of one slot, one per symbol of the run in its order: each symbol's first
 * decision, as a live round places them (others, and symbols the run does not trade, are ignored).
 */
const engineDecisions = (symbols: ReadonlyArray<string>, decisions: ReadonlyArray<ModelDecision>) =>
  symbols.map((symbol): Decision => {
    const decision = decisions.find((d) => d.symbol.trim().toUpperCase() === symbol)
    return decision === undefined ? hold : toDecision({ ...decision, symbol })
  })

/**
 * Backtests of AI accounts, as durable jobs: the account's model decides at each slot of a past
 * range from the history up to that slot, through the model-call cache, and its decisions are
 * filled by the program backtests' engine (the same rulebook).
 */
export class AiBacktests extends Effect.Service<AiBacktests>()("@trading-platform/core/AiBacktests", {
  effect: Effect.gen(function*() {
    const config = yield* PlatformConfig
    const prices = (config.aiTraders ?? defaultAiTraderOptions).prices
    const repo = yield* AiBacktestsRepo
    const traders = yield* AiTraders
    const accounts = yield* Accounts
    const market = yield* MarketData
    const modelCalls = yield* ModelCalls
    const roundsRepo = yield* AiTradersRepo
    const wakeup = yield* JobWakeup

    const submit = (caller: CurrentUserShape, id: AccountId, body: AiBacktestRequest) =>
      Effect.gen(function*() {
        const { initial_balance, fee_rate, margin_mode, slippage } = backtestDefaults
        const request = { initial_balance, fee_rate, slippage, margin_mode, ...aiBacktestDefaults, ...body }
        const account = yield* traders.aiAccount(caller, id)
        const settings = yield* traders.settings(account)
        const timeframe = request.timeframe ?? settings.timeframe
        const interval = request.interval_minutes ?? settings.interval_minutes
        const slotMillis = Math.max(interval * 60_000, timeframeMillis[timeframe])
        const { end, start } = yield* backtestRange({ ...request, timeframe })
        if ((end - start) / slotMillis > maxAiBacktestSlots) {
          return yield* invalidField("end", `must be at most ${maxAiBacktestSlots} decision slots after start`)
        }
        const symbols = (request.symbols ?? settings.symbols).map((s) => s.toUpperCase())
        yield* market.listed(accountExchange(account), symbols)
        const leverage = request.leverage ?? account.default_leverage ?? 1
        if (account.max_leverage !== null && leverage > account.max_leverage) {
          return yield* new LeverageTooHigh({
            error: `Leverage ${leverage} is above the account's max_leverage ${account.max_leverage}`
          })
        }
        const row = yield* repo.jobs.admit(
          caller.id,
          config.maxQueuedJobsPerUser,
          repo.insert({
            user_id: caller.id,
            account_id: id,
            mode: request.mode,
            symbols,
            timeframe,
            interval_minutes: interval,
            initial_balance: request.initial_balance,
            fee_rate: request.fee_rate,
            slippage: request.slippage,
            margin_mode: request.margin_mode,
            leverage,
            max_model_calls: request.max_model_calls,
            // The run keeps the prompts as they are now: editing them later does not change it.
            system_prompt: settings.system_prompt,
            user_template: settings.user_template,
            start_at: new Date(start),
            end_at: new Date(end),
            created_at: yield* now
          })
        )
        yield* wakeup.wake(aiBacktestJobKind)
        return toBacktest(row)
      }).pipe(dieOnStorageFailure, withRequestSpan("AiBacktests.submit", { attributes: { userId: caller.id, id } }))

    /** The account's backtest: 403/404/409 for the account as any AI trader route, 404 for a backtest of another account. */
    const owned = (caller: CurrentUserShape, id: AccountId, backtestId: AiBacktestId) =>
      Effect.gen(function*() {
        yield* traders.aiAccount(caller, id)
        const row = yield* repo.find({ account_id: id, id: backtestId })
        if (Option.isNone(row)) {
          return yield* new NotFound({ error: `Backtest ${backtestId} of account ${id} not found` })
        }
        return row.value
      })

    const get = (caller: CurrentUserShape, id: AccountId, backtestId: AiBacktestId) =>
      owned(caller, id, backtestId).pipe(
        Effect.map(toBacktest),
        dieOnStorageFailure,
        withRequestSpan("AiBacktests.get", { attributes: { userId: caller.id, id, backtestId } })
      )

    /**
     * One run: the range's bars a window at a time; between two slots the engine steps them with
     * holds, and at each slot (the close of a bar on the interval's grid) the model is asked, from
     * the history up to that close and the simulated account, and its decisions fill at the next
     * bar's open. A new attempt starts over; its calls are cached, so it asks the model nothing twice.
     */
    const run = (row: AiBacktestRow, lease: JobLease) =>
      Effect.gen(function*() {
        const account: AccountRow = yield* accounts.owned({ id: row.user_id }, row.account_id)
        const exchange = accountExchange(account)
        const source: CandleSource = { _tag: "Venue", exchange }
        const step = timeframeMillis[row.timeframe]
        const slotMillis = Math.max(row.interval_minutes * 60_000, step)
        const start = Math.ceil(Date.parse(row.start_at) / step) * step
        const end = Date.parse(row.end_at)
        const listed = (yield* market.symbols({ exchange })).symbols
        const markets = yield* Effect.forEach(row.symbols, (symbol) =>
          Effect.map(
            lease.keepAlive(market.fundingRates(source, { symbol, start, end })),
            (rates) => ({
              rules: listed.find((s) => s.symbol === symbol) ??
                unlistedRules(symbol, config.venues.marginTables[exchange]),
              funding: fundingOf(rates)
            })
          ))
        const settings: BacktestSettings = {
          ...defaultSettings(row.timeframe, exchange),
          rules: markets[0]!.rules,
          initialBalance: row.initial_balance,
          takerFeeRate: row.fee_rate,
          slippage: row.slippage,
          marginMode: row.margin_mode,
          leverage: row.leverage,
          // A decision is placed after its bar closed, so it fills at the next bar's open, as live.
          fillTiming: "next_open"
        }
        const engine = new BacktestEngine(settings, markets)
        const decider = holding()
        const traderSettings = {
          symbols: row.symbols,
          timeframe: row.timeframe,
          system_prompt: row.system_prompt,
          user_template: row.user_template
        }
        const model = (yield* traders.settings(account)).model
        const carried: Array<Candle | undefined> = row.symbols.map(() => undefined)
        // Each symbol's last closed bars, what its prompt shows as of a slot.
        const history: Array<Array<Candle>> = yield* Effect.forEach(row.symbols, (symbol) =>
          Effect.map(
            market.candles(source, {
              symbol,
              timeframe: row.timeframe,
              start: start - contextCandles * step,
              end: start
            }),
            (candles) => [...candles]
          ))
        const slots: Array<AiBacktestSlot> = []
        const totals = { calls: 0, cached: 0, promptTokens: 0, completionTokens: 0 }
        let stopReason: string | null = null

        const advance = (bars: Bars, from: number, to: number) => {
          if (from >= to) return
          const chunk = bars.map((symbol) => symbol.slice(from, to))
          engine.run(chunk, decider)
          chunk.forEach((candles, s) => history[s] = [...history[s]!, ...candles].slice(-contextCandles))
        }

        /** The slot at `close`: the prompt as of it, the model's answer through the cache, the decisions placed; false once out of budget. */
        const decide = (close: number) =>
          Effect.gen(function*() {
            const state = engine.state()
            const { facts, messages } = yield* buildPrompt({
              settings: traderSettings,
              time: new Date(close),
              exchange,
              account: {
                account: {
                  id: account.id,
                  name: account.name,
                  cash: state.cash,
                  margin_in_use: state.balance - state.cash,
                  max_leverage: account.max_leverage,
                  default_leverage: account.default_leverage
                },
                positions: row.symbols.flatMap((symbol, s) => {
                  const p = state.positions[s]
                  return p === null || p === undefined ? [] : [{ symbol, ...p }]
                }),
                recent_orders: state.fills.slice(-10).reverse().map((f) => ({
                  symbol: f.symbol,
                  side: f.side,
                  quantity: f.quantity,
                  price: f.price,
                  status: "filled",
                  created_at: new Date(f.time).toISOString()
                }))
              },
              // No ticker in the past: the price is the last close; the 24 h change, funding and news are not shown.
              symbols: row.symbols.map((symbol, s) => ({
                symbol,
                price: history[s]!.at(-1)?.close ?? null,
                change_24h: null,
                funding_rate: null,
                candles: history[s]!
              })),
              // What has no history here is left out: the ranking, the triggers and the news of the past.
              ranking: [],
              triggers: [],
              news: [],
              candles: (symbol, timeframe, count) => {
                const until = Math.floor(close / timeframeMillis[timeframe]) * timeframeMillis[timeframe]
                return market.candles(source, {
                  symbol,
                  timeframe,
                  start: until - count * timeframeMillis[timeframe],
                  end: until
                }).pipe(Effect.catchTag("UnknownSymbol", () => Effect.succeed([])))
              }
            })
            const cacheOnly = row.mode === "replay" || totals.calls >= row.max_model_calls
            const reply = yield* lease.keepAlive(modelCalls.ask(account, messages, facts, cacheOnly)).pipe(
              Effect.map((r) => ({ _tag: "Answered" as const, ...r })),
              Effect.catchTags({
                NotCached: (e) => Effect.succeed(e),
                ModelCallFailed: (e) => Effect.succeed(e)
              })
            )
            /** Keeps the slot and places its answer's decisions (an answer that does not decode holds). */
            const answered = (
              answer: AiBacktestSlot["answer"],
              key: string | null,
              reply: { readonly text: string; readonly promptTokens: number; readonly completionTokens: number }
            ) => {
              const { decisions, error } = decodeAnswer(reply.text)
              slots.push({
                time: close,
                answer,
                key,
                decisions,
                error,
                prompt_tokens: reply.promptTokens,
                completion_tokens: reply.completionTokens
              })
              if (decisions !== null) engine.decideAtClose(engineDecisions(row.symbols, decisions))
              return true
            }
            const held = (key: string | null, error: string) => {
              slots.push({
                time: close,
                answer: "none",
                key,
                decisions: null,
                error,
                prompt_tokens: 0,
                completion_tokens: 0
              })
              return true
            }
            switch (reply._tag) {
              case "NotCached": {
                if (row.mode !== "replay") {
                  stopReason = `max_model_calls: the budget of ${row.max_model_calls} model calls was spent before ${
                    new Date(close).toISOString()
                  }; the results up to it are kept`
                  return false
                }
                // The account's live round at this slot, replayed as it answered then.
                const live = yield* roundsRepo.scheduledAnswer({ account_id: row.account_id, slot: close })
                if (Option.isNone(live)) {
                  return held(
                    reply.key,
                    "not_cached: no answer to this prompt in the cache nor a live round at this slot, and a replay " +
                      "asks no model: holding"
                  )
                }
                totals.cached++
                return answered("live", reply.key, {
                  text: live.value.raw_answer,
                  promptTokens: 0,
                  completionTokens: 0
                })
              }
              case "ModelCallFailed": {
                totals.calls++
                return held(null, `${reply.code}: ${reply.message}`)
              }
              case "Answered": {
                if (reply.cached) totals.cached++
                else {
                  totals.calls++
                  totals.promptTokens += reply.promptTokens
                  totals.completionTokens += reply.completionTokens
                }
                return answered(reply.cached ? "cache" : "model", reply.key, reply)
              }
            }
          })

        let from = start
        windows: while (from < end) {
          yield* lease.checkpoint((from - start) / (end - start))
          const to = Math.min(end, from + windowMillis(step))
          const candles = yield* Effect.forEach(
            row.symbols,
            (symbol) => market.candles(source, { symbol, timeframe: row.timeframe, start: from, end: to })
          )
          const bars = alignBars(candles, carried)
          if (bars === undefined) {
            return yield* new JobFailed({
              message: `No ${row.timeframe} candles of ${row.symbols.join(", ")} from ${
                new Date(from).toISOString()
              } to ${new Date(to).toISOString()}`
            })
          }
          let stepped = 0
          for (let i = 0; i < bars[0]!.length; i++) {
            const close = bars[0]![i]!.time + step
            if (close % slotMillis !== 0) continue
            advance(bars, stepped, i + 1)
            stepped = i + 1
            // Progress, and a cancelled run stops here rather than after the window's calls.
            yield* lease.checkpoint((close - step - start) / (end - start))
            if (!(yield* decide(close))) break windows
          }
          advance(bars, stepped, bars[0]!.length)
          from = to
        }
        return {
          ...outcomeOf(engine.finish()),
          model,
          stop_reason: stopReason,
          model_calls: totals.calls,
          cached_calls: totals.cached,
          prompt_tokens: totals.promptTokens,
          completion_tokens: totals.completionTokens,
          cost: modelCost(prices, model, totals.promptTokens, totals.completionTokens),
          slots
        } satisfies AiBacktestOutcome
      }).pipe(
        Effect.catchTags({
          // The account was deleted, or is no longer an AI account: another attempt would fail alike.
          NotFound: (e) => new JobFailed({ message: e.error }),
          Forbidden: (e) => new JobFailed({ message: e.error }),
          UnknownSymbol: (e) => new JobFailed({ message: `Unknown symbol: ${e.symbol}` })
        }),
        withRequestSpan("AiBacktests.run", { attributes: { id: row.id, accountId: row.account_id } })
      )

    const list = (caller: CurrentUserShape, id: AccountId, page: Pagination) =>
      Effect.zipRight(traders.aiAccount(caller, id), repo.list({ account_id: id, ...pageOf(page) })).pipe(
        Effect.map((rows) => new AiBacktestList({ backtests: rows.map(toEntry) })),
        dieOnStorageFailure,
        withRequestSpan("AiBacktests.list", { attributes: { userId: caller.id, id } })
      )

    const cancel = (caller: CurrentUserShape, id: AccountId, backtestId: AiBacktestId) =>
      Effect.gen(function*() {
        yield* owned(caller, id, backtestId)
        return toBacktest(
          yield* cancelUnfinished(repo.jobs, backtestId, `Backtest ${backtestId}`, yield* now, AiBacktestRow)
        )
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("AiBacktests.cancel", { attributes: { userId: caller.id, id, backtestId } })
      )

    return { submit, get, list, cancel, run, queue: repo.jobs } as const
  })
}) {}
