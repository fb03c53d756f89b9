import { Clock, Effect, Either, Option, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { type AccountId } from "../accounts/Account.js"
import { type AccountRow, Accounts } from "../accounts/Accounts.js"
import { accountExchange, Bindings } from "../automation/Bindings.js"
import { DecisionOrders } from "../automation/DecisionOrders.js"
import { defaultAiTraderOptions, PlatformConfig } from "../config/PlatformConfig.js"
import { Conflict, InvalidInput } from "../http/Errors.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { MarketData } from "../market/MarketData.js"
import { News } from "../news/News.js"
import { Rankings } from "../ranking/Rankings.js"
import { PoolId, type Trigger } from "../signals/Signal.js"
import { Signals } from "../signals/Signals.js"
import { Notifications } from "../sql/Notifications.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import type { Owner } from "../users/Ownership.js"
import { Venues } from "../venues/Venue.js"
import {
  aiTraderDefaults,
  AiTraderSettings,
  type AiTraderUpdate,
  builtinModel,
  DecisionRoundList,
  type ModelDecision,
  type RoundOrder,
  toDecision
} from "./AiTrader.js"
import {
  aiRoundJobKind,
  type AiTraderRow,
  AiTradersRepo,
  decisionChannel,
  DecisionNotice,
  type RoundCall,
  type RoundResult,
  type RoundRow,
  scheduleKey,
  toRound
} from "./AiTradersRepo.js"
import { ModelCalls } from "./ModelCalls.js"
import {
  defaultSystemPrompt,
  defaultUserTemplate,
  parseTemplate,
  PromptVariables,
  promptVariables
} from "./PromptTemplate.js"
import { buildPrompt, contextCandles, promptText, type SymbolContext } from "./TraderContext.js"
import { decodeAnswer, isBuiltin, modelCost } from "./TraderModel.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const hour = 3_600_000
const day = 24 * hour

const settingsOf = (account: AccountRow, row: Option.Option<AiTraderRow>) =>
  new AiTraderSettings({
    account_id: account.id,
    enabled: Option.match(row, { onNone: () => aiTraderDefaults.enabled, onSome: (r) => r.enabled }),
    symbols: Option.match(row, { onNone: () => aiTraderDefaults.symbols, onSome: (r) => r.symbols }),
    timeframe: Option.match(row, { onNone: () => aiTraderDefaults.timeframe, onSome: (r) => r.timeframe }),
    interval_minutes: Option.match(row, {
      onNone: () => aiTraderDefaults.interval_minutes,
      onSome: (r) => r.interval_minutes
    }),
    signal_pool_ids: Option.match(row, {
      onNone: () => aiTraderDefaults.signal_pool_ids,
      onSome: (r) => r.signal_pool_ids
    }),
    system_prompt: Option.match(row, { onNone: () => null, onSome: (r) => r.system_prompt }),
    user_template: Option.match(row, { onNone: () => null, onSome: (r) => r.user_template }),
    max_rounds_per_hour: Option.match(row, { onNone: () => null, onSome: (r) => r.max_rounds_per_hour }),
    max_tokens_per_day: Option.match(row, { onNone: () => null, onSome: (r) => r.max_tokens_per_day }),
    model: isBuiltin(account) ? builtinModel : account.model!,
    next_run_at: Option.match(row, { onNone: () => null, onSome: (r) => r.next_run_at }),
    created_at: Option.match(row, { onNone: () => null, onSome: (r) => r.created_at }),
    updated_at: Option.match(row, { onNone: () => null, onSome: (r) => r.updated_at })
  })

/** The first slot of a schedule starting at `at`: the next whole interval. */
const firstSlot = (at: number, minutes: number) => {
  const step = minutes * 60_000
  return new Date(Math.floor(at / step) * step + step)
}

/**
 * AI traders: an AI account's settings (its symbols, schedule and limits), its decision rounds
 * (queued by its schedule or by hand, run by the workers of `AiTradersLive`) and their log.
 */
export class AiTraders extends Effect.Service<AiTraders>()("@trading-platform/core/AiTraders", {
  effect: Effect.gen(function*() {
    const config = yield* PlatformConfig
    const options = config.aiTraders ?? defaultAiTraderOptions
    const repo = yield* AiTradersRepo
    const accounts = yield* Accounts
    const bindings = yield* Bindings
    const signals = yield* Signals
    const orders = yield* DecisionOrders
    const market = yield* MarketData
    const news = yield* News
    const rankings = yield* Rankings
    const venues = yield* Venues
    const modelCalls = yield* ModelCalls
    const wakeup = yield* JobWakeup
    const notifications = yield* Notifications

    /** The caller's AI account (403/404 as for any account; 409 for a MANUAL one). */
    const aiAccount = (caller: Owner, id: AccountId) =>
      Effect.flatMap(accounts.owned(caller, id), (account) =>
        account.account_type === "AI"
          ? Effect.succeed(account)
          : Effect.fail(
            new Conflict({ error: `Account ${id} is a MANUAL account; only AI accounts have an AI trader` })
          ))

    const get = (caller: CurrentUserShape, id: AccountId) =>
      Effect.gen(function*() {
        const account = yield* aiAccount(caller, id)
        return settingsOf(account, yield* repo.find(id))
      }).pipe(dieOnStorageFailure, withRequestSpan("AiTraders.get", { attributes: { id } }))

    const update = (caller: CurrentUserShape, id: AccountId, input: AiTraderUpdate) =>
      Effect.gen(function*() {
        const account = yield* aiAccount(caller, id)
        const current = settingsOf(account, yield* repo.find(id))
        const symbols = input.symbols ?? current.symbols
        yield* market.listed(accountExchange(account), symbols)
        const systemPrompt = input.system_prompt === undefined ? current.system_prompt : input.system_prompt
        const userTemplate = input.user_template === undefined ? current.user_template : input.user_template
        const candleSymbols: Array<string> = []
        for (const [path, text] of [["system_prompt", systemPrompt], ["user_template", userTemplate]] as const) {
          if (text === null) continue
          const { errors, variables } = parseTemplate(text)
          if (errors.length > 0) {
            return yield* new InvalidInput({
              error: `${path} ${errors.join("; ")}`,
              issues: errors.map((message) => ({ path, message }))
            })
          }
          for (const v of variables) if (v._tag === "Candles") candleSymbols.push(v.symbol)
        }
        yield* market.listed(accountExchange(account), candleSymbols)
        const pools = input.signal_pool_ids ?? current.signal_pool_ids
        // A pool's triggers start the account's rounds, so the pool must be the caller's too.
        yield* Effect.forEach(pools, (pool) => signals.ownedPool(caller, PoolId.make(pool)))
        const enabled = input.enabled ?? current.enabled
        const interval = input.interval_minutes ?? current.interval_minutes
        const at = yield* now
        const rescheduled = input.enabled !== undefined || input.interval_minutes !== undefined ||
          current.next_run_at === null
        const row = yield* repo.upsert({
          account_id: id,
          user_id: account.user_id,
          now: at,
          edit: {
            enabled,
            symbols,
            timeframe: input.timeframe ?? current.timeframe,
            interval_minutes: interval,
            signal_pool_ids: pools,
            system_prompt: systemPrompt,
            user_template: userTemplate,
            max_rounds_per_hour: input.max_rounds_per_hour === undefined
              ? current.max_rounds_per_hour
              : input.max_rounds_per_hour,
            max_tokens_per_day: input.max_tokens_per_day === undefined
              ? current.max_tokens_per_day
              : input.max_tokens_per_day,
            next_run_at: !enabled
              ? null
              : rescheduled
              ? firstSlot(at.getTime(), interval)
              : new Date(current.next_run_at!)
          }
        })
        return settingsOf(account, Option.some(row))
      }).pipe(dieOnStorageFailure, withRequestSpan("AiTraders.update", { attributes: { id } }))

    /** Queues a round now, whatever the schedule (`POST /api/account/{id}/ai-trader/decide`). */
    const decideNow = (caller: CurrentUserShape, id: AccountId) =>
      Effect.gen(function*() {
        const account = yield* aiAccount(caller, id)
        const at = yield* now
        const round = yield* repo.enqueue({
          user_id: account.user_id,
          account_id: id,
          trigger: "manual",
          // Each request is a round of its own.
          idempotency_key: `manual:${id}:${randomUUID()}`,
          now: at
        })
        yield* wakeup.wake(aiRoundJobKind)
        return toRound(Option.getOrThrow(round))
      }).pipe(dieOnStorageFailure, withRequestSpan("AiTraders.decideNow", { attributes: { id } }))

    const list = (caller: CurrentUserShape, id: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, id), repo.list({ account_id: id, ...pageOf(page) })).pipe(
        Effect.map((rows) => new DecisionRoundList({ decisions: rows.map(toRound) })),
        dieOnStorageFailure,
        withRequestSpan("AiTraders.list", { attributes: { userId: caller.id, id } })
      )

    /** Finished rounds as they are written, on every instance (for the owner's streams). */
    const decodeNotice = Schema.decodeUnknown(Schema.parseJson(DecisionNotice))
    const changes = notifications.listen(decisionChannel).pipe(
      Stream.mapEffect((payload) => Effect.option(decodeNotice(payload))),
      Stream.filterMap((notice) => notice)
    )

    // ---- a round -------------------------------------------------------------------------------

    /**
     * What the model is shown: only the account owner's data, read as the owner (the account,
     * its positions and orders, the news from its sources), and the market's public prices and
     * candles of its symbols.
     */
    const gather = (account: AccountRow, settings: AiTraderSettings) =>
      Effect.gen(function*() {
        const owner = { id: account.user_id }
        const exchange = accountExchange(account)
        const tickers = yield* venues[exchange].tickers
        const positions = (yield* bindings.listPositions(owner, account.id, { limit: 50, offset: 0 })).positions
        const recent = (yield* bindings.listOrders(owner, account.id, { limit: 10, offset: 0 })).orders
        const symbols = yield* Effect.forEach(settings.symbols, (symbol) =>
          Effect.map(
            market.latest({ _tag: "Venue", exchange }, symbol, settings.timeframe, contextCandles),
            (candles): SymbolContext => ({
              symbol,
              price: tickers.get(symbol)?.price ?? candles.at(-1)?.close ?? null,
              change_24h: tickers.get(symbol)?.change_24h ?? null,
              funding_rate: tickers.get(symbol)?.funding_rate ?? null,
              candles
            })
          ))
        // The latest stories about its symbols from the owner's enabled news sources.
        const stories = (yield* Effect.forEach(settings.symbols, (symbol) => news.about(account.user_id, symbol, 3)))
          .flat()
        // The venue's ranking (computed for everyone, cached): its best five and the account's own symbols.
        // A ranking that cannot be computed now leaves the list empty rather than the round undone.
        const ranked = yield* rankings.table({ exchange, limit: 500 }).pipe(
          Effect.map((table) =>
            table.rows.filter((row) => row.rank <= 5 || settings.symbols.includes(row.symbol))
              .map((row) => ({ rank: row.rank, symbol: row.symbol, score: row.score }))
          ),
          Effect.catchAll(() => Effect.succeed([]))
        )
        // The owner's own pools' latest triggers on its symbols: never another user's.
        const fired = (yield* signals.triggers(owner, { limit: 50 })).triggers
          .filter((t) => settings.symbols.includes(t.symbol))
          .slice(0, 10)
          .map((t) => ({
            pool_name: t.pool_name,
            symbol: t.symbol,
            fired_at: t.fired_at,
            values: t.values.map((v) => ({ signal_name: v.signal_name, value: v.value }))
          }))
        return yield* buildPrompt({
          settings,
          time: yield* now,
          exchange,
          account: {
            account: {
              id: account.id,
              name: account.name,
              cash: account.current_cash,
              margin_in_use: account.frozen_cash,
              max_leverage: account.max_leverage,
              default_leverage: account.default_leverage
            },
            positions: positions.map((p) => ({
              symbol: p.symbol,
              side: p.side,
              size: p.size,
              entry_price: p.entry_price,
              leverage: p.leverage,
              take_profit_price: p.take_profit_price,
              stop_loss_price: p.stop_loss_price
            })),
            recent_orders: recent.map((o) => ({
              symbol: o.symbol,
              side: o.side,
              quantity: o.quantity,
              price: o.price,
              status: o.status,
              created_at: o.created_at
            }))
          },
          symbols,
          ranking: ranked,
          triggers: fired,
          news: stories.map((item) => ({ symbols: item.symbols, title: item.title, published_at: item.published_at })),
          candles: (symbol, timeframe, count) =>
            market.latest({ _tag: "Venue", exchange }, symbol, timeframe, count).pipe(
              Effect.catchTag("UnknownSymbol", () => Effect.succeed([]))
            )
        })
      })

    /**
     * Asks the account's model through the cache; any failure, or an answer that does not decode,
     * is a call with no decisions and why. Live rounds read the cache too: a round's prompt holds its
     * time, so a hit is only the very same call (the model at temperature 0 would answer it alike),
     * and every live answer kept there is one a backtest or replay of that moment finds.
     */
    const ask = (account: AccountRow, settings: AiTraderSettings) =>
      Effect.gen(function*() {
        const { facts, messages } = yield* gather(account, settings)
        const prompt = promptText(messages)
        const started = yield* Clock.currentTimeMillis
        const model = settings.model
        // The model's failure is the round's (no trade); the storage's hands the round back.
        const reply = yield* modelCalls.ask(account, messages, facts, false).pipe(
          Effect.map(Either.right),
          Effect.catchTags({
            ModelCallFailed: (e) => Effect.succeed(Either.left(e)),
            NotCached: () => Effect.dieMessage("a call that may ask its model found nothing cached")
          })
        )
        const latency = (yield* Clock.currentTimeMillis) - started
        if (reply._tag === "Left") {
          return {
            model,
            prompt,
            raw_answer: null,
            decisions: null,
            prompt_tokens: 0,
            completion_tokens: 0,
            cost: 0,
            latency_ms: latency,
            cached: false,
            error: `${reply.left.code}: ${reply.left.message}`
          } satisfies RoundCall
        }
        const { cached, text } = reply.right
        const { decisions, error } = decodeAnswer(text)
        // A cached answer spent nothing: no tokens count against the day's limit, and it costs nothing.
        const promptTokens = cached ? 0 : reply.right.promptTokens
        const completionTokens = cached ? 0 : reply.right.completionTokens
        return {
          model,
          prompt,
          raw_answer: text,
          decisions,
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          cost: modelCost(options.prices, model, promptTokens, completionTokens),
          latency_ms: latency,
          cached,
          error
        } satisfies RoundCall
      })

    /** Why a round may not ask its model now (over a limit), or null. */
    const overLimit = (round: RoundRow, settings: AiTraderSettings) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const perHour = settings.max_rounds_per_hour ?? options.roundsPerHour
        const lastHour = yield* repo.usageSince(round.account_id, new Date(at - hour), round.id)
        if (lastHour.rounds >= perHour) {
          return `rounds_per_hour: ${lastHour.rounds} rounds in the last hour, the limit is ${perHour}`
        }
        const perDay = settings.max_tokens_per_day ?? options.tokensPerDay
        const today = yield* repo.usageSince(round.account_id, new Date(Math.floor(at / day) * day), round.id)
        if (today.tokens >= perDay) {
          return `tokens_per_day: ${today.tokens} tokens used today (UTC), the limit is ${perDay}`
        }
        return null
      })

    /** Places a round's decisions, one per symbol of the account's, through the same path as a program's run. */
    const place = (
      round: RoundRow,
      account: AccountRow,
      settings: AiTraderSettings,
      decisions: ReadonlyArray<ModelDecision>
    ) =>
      Effect.gen(function*() {
        const exchange = accountExchange(account)
        const placed: Array<RoundOrder> = []
        const seen = new Set<string>()
        for (const decision of decisions) {
          const symbol = decision.symbol.trim().toUpperCase()
          if (!settings.symbols.includes(symbol)) {
            placed.push({ symbol, order_id: null, status: null, error: "not one of the account's symbols; ignored" })
            continue
          }
          if (seen.has(symbol)) {
            placed.push({ symbol, order_id: null, status: null, error: "a second decision for the symbol; ignored" })
            continue
          }
          seen.add(symbol)
          const result = yield* orders.place(
            {
              run_id: null,
              binding_id: null,
              program_id: null,
              user_id: account.user_id,
              idempotency_key: `ai:${round.id}:${symbol}`,
              leverage: null
            },
            account,
            exchange,
            symbol,
            toDecision({ ...decision, symbol })
          ).pipe(
            Effect.catchTag("FinalFailure", (e) => Effect.succeed({ order: null, refusal: e.message }))
          )
          const order = result.order === null ? Option.none() : yield* orders.orderOfKey(`ai:${round.id}:${symbol}`)
          placed.push({
            symbol,
            order_id: Option.match(order, { onNone: () => null, onSome: (o) => o.id }),
            status: Option.match(order, { onNone: () => null, onSome: (o) => o.status }),
            error: result.refusal
          })
        }
        return placed
      })

    /**
     * One claimed round: checks the limits, asks the model (once: the call is kept on the round,
     * so a round taken over after a crash acts on it), and places the decisions.
     */
    const runRound = (round: RoundRow) =>
      Effect.gen(function*() {
        const account = yield* accounts.owned({ id: round.user_id }, round.account_id)
        const settings = settingsOf(account, yield* repo.find(account.id))
        const skipped = (error: string): RoundResult => ({ outcome: "skipped", orders: [], error })
        if (account.account_type !== "AI") return skipped("the account is not an AI account")
        if (!account.is_active) return skipped(`account ${account.id} is not active`)
        let decisions = round.decisions
        if (round.prompt === null) {
          const limit = yield* overLimit(round, settings)
          if (limit !== null) return skipped(limit)
          const call = yield* ask(account, settings)
          yield* repo.called(round, call)
          if (call.decisions === null) {
            return { outcome: "no_trade", orders: [], error: call.error } satisfies RoundResult
          }
          decisions = call.decisions
        } else if (decisions === null) {
          return { outcome: "no_trade", orders: [], error: "the model's answer did not decode" } satisfies RoundResult
        }
        // In the account's decision log as a program's are, at the round's start (the same on a retry).
        const at = round.started_at === null ? yield* now : new Date(round.started_at)
        for (const d of decisions) {
          if (!settings.symbols.includes(d.symbol.trim().toUpperCase())) continue
          yield* orders.logDecision({
            account_id: account.id,
            decision_time: at,
            symbol: d.symbol.trim().toUpperCase(),
            operation: d.operation,
            target_portion_of_balance: d.target_portion_of_balance ?? null,
            leverage: d.leverage ?? null,
            reason: d.reason
          })
        }
        const placed = yield* place(round, account, settings, decisions)
        return { outcome: "traded", orders: placed, error: null } satisfies RoundResult
      }).pipe(withRequestSpan("AiTraders.runRound", { attributes: { id: round.id, accountId: round.account_id } }))

    /** Queues the rounds of the AI traders whose slot is due, and moves each to its next slot. */
    const queueDue = Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      let queued = 0
      for (const trader of yield* repo.due(new Date(at))) {
        const slot = Date.parse(trader.next_run_at!)
        const step = trader.interval_minutes * 60_000
        const next = slot + step * Math.max(1, Math.ceil((at - slot + 1) / step))
        if (!(yield* repo.advance(trader.account_id, new Date(slot), new Date(next)))) continue
        const round = yield* repo.enqueue({
          user_id: trader.user_id,
          account_id: trader.account_id,
          trigger: "schedule",
          idempotency_key: scheduleKey(trader.account_id, slot),
          now: new Date(at)
        })
        if (Option.isSome(round)) queued++
      }
      if (queued > 0) yield* wakeup.wake(aiRoundJobKind)
    })

    /**
     * Queues a round for each enabled AI trader that listens to the trigger's pool and trades its
     * symbol. Every replica sees every trigger; the key `signal:<account>:<trigger>` makes each one
     * round.
     */
    const onTrigger = (trigger: Trigger) =>
      Effect.gen(function*() {
        const at = yield* now
        let queued = 0
        for (const trader of yield* repo.listeningTo(trigger.pool_id)) {
          if (!trader.symbols.includes(trigger.symbol)) continue
          const round = yield* repo.enqueue({
            user_id: trader.user_id,
            account_id: trader.account_id,
            trigger: "signal",
            idempotency_key: `signal:${trader.account_id}:${trigger.id}`,
            now: at
          })
          if (Option.isSome(round)) queued++
        }
        if (queued > 0) yield* wakeup.wake(aiRoundJobKind)
      })

    /** What a prompt may name, and the default prompts. */
    const variables = new PromptVariables({
      variables: promptVariables,
      default_system_prompt: defaultSystemPrompt,
      default_user_template: defaultUserTemplate
    })

    // A round's end wakes a worker: the account's next round, held back while this one ran, starts now.
    const queue: typeof repo.queue = {
      ...repo.queue,
      complete: (run, result, at) => Effect.zipRight(repo.queue.complete(run, result, at), wakeup.wake(aiRoundJobKind)),
      fail: (run, error, at) => Effect.zipRight(repo.queue.fail(run, error, at), wakeup.wake(aiRoundJobKind))
    }

    /** The account's AI trader settings (the defaults until first set). */
    const settings = (account: AccountRow) => Effect.map(repo.find(account.id), (row) => settingsOf(account, row))

    return {
      aiAccount,
      settings,
      get,
      update,
      decideNow,
      list,
      variables,
      changes,
      runRound,
      queueDue,
      onTrigger,
      queue
    } as const
  })
}) {}
